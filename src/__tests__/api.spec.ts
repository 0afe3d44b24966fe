import { ServerConnection } from '@jupyterlab/services';

import { errorMessage, GpuProfApi, IRunListing, requestAPI, runPath } from '../api';

const settings = ServerConnection.makeSettings({ baseUrl: 'http://host:1234/lab-base/' });

function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' }
  });
}

describe('api', () => {
  let makeRequest: jest.SpyInstance;

  beforeEach(() => {
    makeRequest = jest.spyOn(ServerConnection, 'makeRequest');
  });

  afterEach(() => {
    makeRequest.mockRestore();
  });

  it('requests the namespaced URL with the given settings', async () => {
    makeRequest.mockResolvedValue(jsonResponse({ version: '0.1.0', runs_root: '/r' }));
    const status = await new GpuProfApi(settings).status();
    expect(status).toEqual({ version: '0.1.0', runs_root: '/r' });
    expect(makeRequest).toHaveBeenCalledTimes(1);
    const [url, init, passed] = makeRequest.mock.calls[0];
    expect(url).toBe('http://host:1234/lab-base/jupyter-gpuprof/status');
    expect(init).toEqual({});
    expect(passed).toBe(settings);
  });

  it('returns the page of runs', async () => {
    const run: IRunListing = {
      id: '20261129-191322-mlp',
      name: 'mlp',
      created: '2026-11-29T19:13:22+00:00',
      status: 'complete',
      verdict: 'input-bound',
      error: null
    };
    makeRequest.mockResolvedValue(jsonResponse({ runs: [run], total: 1 }));
    await expect(new GpuProfApi(settings).runs()).resolves.toEqual({ runs: [run], total: 1 });
    expect(makeRequest.mock.calls[0][0]).toBe('http://host:1234/lab-base/jupyter-gpuprof/runs');
  });

  it('rejects a runs answer without a list', async () => {
    makeRequest.mockResolvedValue(jsonResponse({ runs: 'nope' }));
    await expect(new GpuProfApi(settings).runs()).rejects.toThrow('Unexpected answer');
  });

  it('turns error JSON into a ResponseError with the server message', async () => {
    makeRequest.mockResolvedValue(jsonResponse({ message: 'Forbidden', reason: null }, 403));
    const failure = requestAPI('status', {}, settings);
    await expect(failure).rejects.toBeInstanceOf(ServerConnection.ResponseError);
    await expect(failure).rejects.toThrow('Forbidden');
  });

  it('wraps transport failures in a NetworkError', async () => {
    makeRequest.mockRejectedValue(new TypeError('Failed to fetch'));
    await expect(requestAPI('status', {}, settings)).rejects.toBeInstanceOf(
      ServerConnection.NetworkError
    );
  });
});

describe('errorMessage', () => {
  const response = new Response(null, { status: 502, statusText: 'Bad Gateway' });

  it('prefers message, then reason', () => {
    expect(errorMessage('{"message": "", "reason": "no runs root"}', response)).toBe(
      'no runs root'
    );
  });

  it('falls back to short text, then to the HTTP status', () => {
    expect(errorMessage('upstream down', response)).toBe('upstream down');
    expect(errorMessage('<html>' + 'x'.repeat(300), response)).toBe('502 Bad Gateway');
  });
});

describe('run browser routes', () => {
  let makeRequest: jest.SpyInstance;
  const api = new GpuProfApi(settings);

  beforeEach(() => {
    makeRequest = jest.spyOn(ServerConnection, 'makeRequest');
  });

  afterEach(() => {
    makeRequest.mockRestore();
  });

  const lastCall = (): [string, RequestInit] => {
    const [url, init] = makeRequest.mock.calls[makeRequest.mock.calls.length - 1];
    return [url as string, init as RequestInit];
  };

  it('sends filters and the page as query parameters, skipping empty ones', async () => {
    const page = { runs: [], total: 0, offset: 0, limit: 50, facets: {} };
    makeRequest.mockResolvedValue(jsonResponse(page));
    await expect(
      api.runs({ q: 'tiny gpt', tag: '', verdict: 'input', limit: 50 })
    ).resolves.toEqual(page);
    expect(lastCall()[0]).toBe(
      'http://host:1234/lab-base/jupyter-gpuprof/runs?q=tiny+gpt&verdict=input&limit=50'
    );
  });

  it('escapes the run id as one path segment', async () => {
    makeRequest.mockResolvedValue(jsonResponse({ verdict: { category: 'input' } }));
    await expect(api.summary('../a/b')).resolves.toEqual({ verdict: { category: 'input' } });
    expect(lastCall()[0]).toBe('http://host:1234/lab-base/jupyter-gpuprof/runs/..%2Fa%2Fb/summary');
    expect(runPath('r 1', 'code')).toBe('runs/r%201/code');
  });

  it('renames with PATCH and deletes with DELETE', async () => {
    makeRequest.mockResolvedValue(jsonResponse({ id: 'r', name: 'new' }));
    await api.update('r', { name: 'new' });
    expect(lastCall()).toEqual([
      'http://host:1234/lab-base/jupyter-gpuprof/runs/r',
      { method: 'PATCH', body: '{"name":"new"}' }
    ]);
    makeRequest.mockResolvedValue(jsonResponse({ deleted: 'r' }));
    await api.remove('r');
    expect(lastCall()[1]).toEqual({ method: 'DELETE' });
  });

  it('asks for a comparison of two ids', async () => {
    makeRequest.mockResolvedValue(jsonResponse({ steps: { verdict: 'noise' } }));
    await api.compare('a b', 'c');
    expect(lastCall()[0]).toBe('http://host:1234/lab-base/jupyter-gpuprof/compare?a=a+b&b=c');
  });

  it('downloads the trace as a blob and reports server errors', async () => {
    makeRequest.mockResolvedValue(new Response(new Uint8Array([31, 139]), { status: 200 }));
    const blob = await api.trace('r');
    expect(blob.size).toBe(2);
    makeRequest.mockResolvedValue(jsonResponse({ message: 'run has no trace.json.gz' }, 404));
    await expect(api.trace('r')).rejects.toThrow('run has no trace.json.gz');
  });
});
