/**
 * Typed REST client of the jupyter_gpuprof server extension.
 *
 * Every request goes through `ServerConnection.makeRequest`, which adds the token and the
 * XSRF header of the running server.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IReportSummary } from './report/summary';

/** URL prefix of every route of the server extension. */
export const API_NAMESPACE = 'jupyter-gpuprof';

/** `GET /jupyter-gpuprof/status`. */
export interface IServerStatus {
  version: string;
  runs_root: string;
}

/**
 * One row of `GET /jupyter-gpuprof/runs`; `status` is `running` while a capture is being
 * written and `broken` for unreadable folders (then `error` says why).
 */
export interface IRunListing {
  id: string;
  name: string;
  created: string | null;
  status: string;
  verdict: string | null;
  verdict_category?: string | null;
  error: string | null;
  tags?: string[];
  gpu?: string | null;
  world_size?: number | null;
  median_ms?: number | null;
  p95_ms?: number | null;
  /** How many step times `median_ms` and `p95_ms` rest on. */
  n_step_times?: number;
  has_summary?: boolean;
  /** What the views offer for this run, decided by the server (server/abilities.py). */
  abilities?: RunAbility[];
  /** Why the run shows no report: its view's first line (null when it shows one). */
  unavailable?: string | null;
  /** The command line it ran (or the profiled cell's first line). */
  command?: string | null;
  /** What the reader dropped from its meta.json as wrongly shaped (null: nothing). */
  warning?: string | null;
}

/** An action a run may offer (`ACTIONS` of server/abilities.py). */
export type RunAbility = 'view_report' | 'download_trace' | 'open_perfetto' | 'compare';

/** Filters and page of `GET /jupyter-gpuprof/runs`. */
export interface IRunQuery {
  q?: string;
  verdict?: string;
  tag?: string;
  status?: string;
  offset?: number;
  limit?: number;
}

/** A page of runs plus the values the filters can take. */
export interface IRunPage {
  runs: IRunListing[];
  total: number;
  offset: number;
  limit: number;
  facets: { verdicts: string[]; tags: string[]; statuses: string[] };
}

/** `GET /runs/<id>`: the row plus capture details. */
export interface IRunDetail {
  run: IRunListing;
  settings: Record<string, unknown>;
  env: Record<string, unknown>;
  baseline_steps: number;
  timing: string | null;
  traces: string[];
  has_code: boolean;
}

/** One rank of a distributed run: the generated `DistributedRank` (see report/summary.ts). */
export type { IRankRow } from './report/summary';

/** Rows of the op and kernel-kind deltas, in ms per step (the comparison's `delta_unit`). */
export interface IDeltaRow {
  name: string;
  before_ms: number;
  after_ms: number;
  delta_ms: number;
  delta_pct: number | null;
}

/** A side's finding as the comparison names it, with what its fix's try measured. */
export interface ICompareFinding {
  id: string;
  category: string;
  title: string;
  expected_gain_pct: number | null;
  measured_gain_pct?: number | null;
}

/** The before run's predictions for the findings gone after, beside the measured gain. */
export interface IPredictionCheck {
  resolved: ICompareFinding[];
  measured_gain_pct: number | null;
  ci_low_gain_pct: number | null;
  ci_high_gain_pct: number | null;
  verdict: string;
}

/** One side of a comparison. */
export interface ICompareSide {
  name: string | null;
  /** The name that tells this side from the other (`train · 2026-11-29 19:13`). */
  label: string;
  created?: string | null;
  run_id: string | null;
  gpu: string | null;
  median_ms: number | null;
  p95_ms: number | null;
  verdict: { category: string | null; summary: string | null; confidence: string | null };
  findings: ICompareFinding[];
  step_ms: number[];
  step_source: string;
}

/** `GET /compare?a=&b=`: see jupyter_gpuprof/analysis/compare.py. */
export interface IComparison {
  before: ICompareSide;
  after: ICompareSide;
  steps: {
    n_before: number;
    n_after: number;
    median_before_ms: number | null;
    median_after_ms: number | null;
    delta_ms: number | null;
    delta_pct: number | null;
    ci_low_ms: number | null;
    ci_high_ms: number | null;
    p_value: number | null;
    confidence: number;
    verdict: string;
    significant: boolean;
    direction: string;
    speedup: number | null;
    unreliable_reasons?: string[];
  };
  ops: { regressions: IDeltaRow[]; improvements: IDeltaRow[] };
  kernel_kinds: { regressions: IDeltaRow[]; improvements: IDeltaRow[] };
  findings: { resolved: string[]; new: string[]; remaining: string[] };
  prediction?: IPredictionCheck;
  /** `ms_per_step`: the unit of every delta row. */
  delta_unit: string;
  /** The one sentence the view leads with, decided by the comparison (analysis/compare_words.py). */
  headline: string;
  /** Conditions both sides ran under (a power cap on both), stated in the headline. */
  caveats: string[];
}

/** `GET /runs/<id>/code`. */
export interface IRunCode {
  id: string;
  name: string;
  code: string;
}

/** The best human message in an error body: Jupyter's `{message, reason}` JSON, or text. */
export function errorMessage(body: string, response: Response): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed !== null && typeof parsed === 'object') {
      const record = parsed as Record<string, unknown>;
      for (const key of ['message', 'reason']) {
        const value = record[key];
        if (typeof value === 'string' && value.length > 0) {
          return value;
        }
      }
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): fall through to the raw text.
  }
  const text = body.trim();
  return text.length > 0 && text.length < 200
    ? text
    : `${response.status} ${response.statusText}`.trim();
}

/**
 * Request `endPoint` under the extension's namespace and parse its JSON body.
 *
 * Throws `ServerConnection.NetworkError` when the server can't be reached and
 * `ServerConnection.ResponseError` (carrying the server's message) on a non-2xx answer.
 */
export async function requestAPI<T>(
  endPoint: string,
  init: RequestInit = {},
  settings: ServerConnection.ISettings = ServerConnection.makeSettings()
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, API_NAMESPACE, endPoint);
  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, settings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }
  const body = await response.text();
  if (!response.ok) {
    throw new ServerConnection.ResponseError(response, errorMessage(body, response));
  }
  return (body.length > 0 ? JSON.parse(body) : null) as T;
}

/** The extension's routes, bound to one server. */
export class GpuProfApi {
  constructor(readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()) {}

  status(): Promise<IServerStatus> {
    return requestAPI<IServerStatus>('status', {}, this.settings);
  }

  async runs(query: IRunQuery = {}): Promise<IRunPage> {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined && value !== '') {
        params.set(key, String(value));
      }
    }
    const search = params.toString();
    const data = await requestAPI<IRunPage>(search ? `runs?${search}` : 'runs', {}, this.settings);
    if (data === null || !Array.isArray(data.runs)) {
      throw new Error('Unexpected answer from the jupyter-gpuprof runs route');
    }
    return data;
  }

  run(id: string): Promise<IRunDetail> {
    return requestAPI<IRunDetail>(runPath(id), {}, this.settings);
  }

  /** `summary.json` (`Report.to_json()`), analysed and cached by the server on first request. */
  summary(id: string): Promise<IReportSummary> {
    return requestAPI<IReportSummary>(runPath(id, 'summary'), {}, this.settings);
  }

  code(id: string): Promise<IRunCode> {
    return requestAPI<IRunCode>(runPath(id, 'code'), {}, this.settings);
  }

  update(id: string, patch: { name?: string; tags?: string[] }): Promise<IRunListing> {
    const init = { method: 'PATCH', body: JSON.stringify(patch) };
    return requestAPI<IRunListing>(runPath(id), init, this.settings);
  }

  async remove(id: string): Promise<void> {
    await requestAPI<{ deleted: string }>(runPath(id), { method: 'DELETE' }, this.settings);
  }

  compare(before: string, after: string): Promise<IComparison> {
    const params = new URLSearchParams({ a: before, b: after });
    return requestAPI<IComparison>(`compare?${params.toString()}`, {}, this.settings);
  }

  /** The gzipped trace as a Blob (fetched with the token, then saved by the browser). */
  async trace(id: string): Promise<Blob> {
    const url = URLExt.join(this.settings.baseUrl, API_NAMESPACE, runPath(id, 'trace'));
    const response = await ServerConnection.makeRequest(url, {}, this.settings);
    if (!response.ok) {
      const body = await response.text();
      throw new ServerConnection.ResponseError(response, errorMessage(body, response));
    }
    return response.blob();
  }
}

/** `runs/<id>[/<part>]` with the id escaped as one path segment. */
export function runPath(id: string, part?: string): string {
  const base = `runs/${encodeURIComponent(id)}`;
  return part ? `${base}/${part}` : base;
}
