/**
 * Typed REST client of the jupyter_gpuprof server extension.
 *
 * Every request goes through `ServerConnection.makeRequest`, which adds the token and the
 * XSRF header of the running server.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

/** URL prefix of every route of the server extension. */
export const API_NAMESPACE = 'jupyter-gpuprof';

/** `GET /jupyter-gpuprof/status`. */
export interface IServerStatus {
  version: string;
  runs_root: string;
}

/** One row of `GET /jupyter-gpuprof/runs`; `status` is `broken` for unreadable folders. */
export interface IRunListing {
  id: string;
  name: string;
  created: string | null;
  status: string;
  verdict: string | null;
  error: string | null;
}

interface IRunsResponse {
  runs: IRunListing[];
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
  constructor(
    readonly settings: ServerConnection.ISettings = ServerConnection.makeSettings()
  ) {}

  status(): Promise<IServerStatus> {
    return requestAPI<IServerStatus>('status', {}, this.settings);
  }

  async runs(): Promise<IRunListing[]> {
    const data = await requestAPI<IRunsResponse>('runs', {}, this.settings);
    if (data === null || !Array.isArray(data.runs)) {
      throw new Error('Unexpected answer from the jupyter-gpuprof runs route');
    }
    return data.runs;
  }
}
