import { ServerConnection } from '@jupyterlab/services';

import { errorMessage, GpuProfApi, IRunListing, requestAPI } from '../api';

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

  it('unwraps the run list', async () => {
    const run: IRunListing = {
      id: '20261129-191322-mlp',
      name: 'mlp',
      created: '2026-11-29T19:13:22+00:00',
      status: 'complete',
      verdict: 'input-bound',
      error: null
    };
    makeRequest.mockResolvedValue(jsonResponse({ runs: [run] }));
    await expect(new GpuProfApi(settings).runs()).resolves.toEqual([run]);
    expect(makeRequest.mock.calls[0][0]).toBe(
      'http://host:1234/lab-base/jupyter-gpuprof/runs'
    );
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
