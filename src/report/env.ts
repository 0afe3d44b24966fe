/**
 * What a report can do beyond its summary, given by whoever mounts it: the sidebar (a server
 * behind it), the notebook widget (a server when the page is JupyterLab's), or nothing (a static
 * page). Every toolbar button and lazy load checks here first, so the report degrades quietly.
 */
import { IStepDetail } from './summary';

/** One step's events as the server's `GET runs/<id>/timeline?step=K` answers them. */
export interface IStepAnswer {
  strings: string[];
  detail: IStepDetail;
}

/** The kernel's tries of the report's fixes (the notebook widget over a live kernel). */
export interface ITryControl {
  /** The button's label, naming the fixes it tries. */
  label(): string;
  /** The progress line ('' before the first try). */
  status(): string;
  running(): boolean;
  start(): void;
  cancel(): void;
  /** Call `callback` whenever the status or the running state changes. */
  onChange(callback: () => void): void;
}

/** Capabilities of the page that mounts the report. */
export interface IReportEnv {
  /** Try the report's fixes in the kernel (absent without one: a shared notebook, the sidebar). */
  tries?: ITryControl;
  /** Every event of profiled step `step` (zoomed past what the summary inlines). */
  loadStep?(step: number): Promise<IStepAnswer>;
  /** The run's trace file, gzipped as saved (for Perfetto and the download button). */
  traceBytes?(): Promise<ArrayBuffer>;
  /** Run an extension command (ids under `jupyter-gpuprof:`) when JupyterLab is around. */
  command?(id: string, args: Record<string, string>): void;
}

/** The JupyterLab page's server base URL, or null outside JupyterLab (read from its page config). */
export function pageBaseUrl(): string | null {
  const node = document.getElementById('jupyter-config-data');
  if (!node?.textContent) {
    return null;
  }
  try {
    const base = JSON.parse(node.textContent).baseUrl;
    return typeof base === 'string' ? base : null;
  } catch {
    return null;
  }
}

/** Event the notebook widget dispatches to ask the Lab extension to run one of its commands. */
export const COMMAND_EVENT = 'jupyter-gpuprof-command';

/**
 * The capabilities a notebook report has: server routes of run `runId` when the page is
 * JupyterLab's (same origin, its cookie authenticates), commands through a DOM event the
 * extension listens for.
 */
export function pageEnv(runId: string | null | undefined, el: HTMLElement): IReportEnv {
  const base = pageBaseUrl();
  if (base === null || !runId) {
    return {};
  }
  const run = `${base.replace(/\/?$/, '/')}jupyter-gpuprof/runs/${encodeURIComponent(runId)}`;
  const get = async (url: string) => {
    const response = await fetch(url, { credentials: 'same-origin' });
    if (!response.ok) {
      throw new Error(`${response.status} ${response.statusText}`);
    }
    return response;
  };
  return {
    loadStep: async step => (await get(`${run}/timeline?step=${step}`)).json(),
    traceBytes: async () => (await get(`${run}/trace`)).arrayBuffer(),
    command: (id, args) =>
      el.dispatchEvent(new CustomEvent(COMMAND_EVENT, { bubbles: true, detail: { id, args } }))
  };
}
