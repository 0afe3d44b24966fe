import { IRunListing, IRunPage, IServerStatus } from '../api';
import { IRunsApi, RunsModel } from '../model';

function run(id: string, extra: Partial<IRunListing> = {}): IRunListing {
  return { id, name: id, created: null, status: 'complete', verdict: null, error: null, ...extra };
}

function page(runs: IRunListing[], extra: Partial<IRunPage> = {}): IRunPage {
  return {
    runs,
    total: runs.length,
    offset: 0,
    limit: 100,
    facets: { verdicts: ['input'], tags: ['fix'], statuses: ['complete'] },
    ...extra
  };
}

const STATUS: IServerStatus = { version: '0.1.0', runs_root: '/runs' };

/** A mocked REST client: every method a jest.fn the test can inspect and steer. */
function mockApi(runs: IRunListing[] = [run('b'), run('a')]) {
  const api = {
    status: jest.fn().mockResolvedValue(STATUS),
    runs: jest.fn().mockResolvedValue(page(runs)),
    update: jest.fn(),
    remove: jest.fn().mockResolvedValue(undefined)
  };
  return { api, model: new RunsModel(api as unknown as IRunsApi) };
}

describe('RunsModel', () => {
  it('loads status and the first page, and signals the change', async () => {
    const { api, model } = mockApi();
    const changed = jest.fn();
    model.changed.connect(changed);
    await model.refresh();
    expect(model.runs.map(r => r.id)).toEqual(['b', 'a']);
    expect(model.total).toBe(2);
    expect(model.status).toEqual(STATUS);
    expect(model.facets.tags).toEqual(['fix']);
    expect(model.error).toBeNull();
    expect(changed).toHaveBeenCalledTimes(1);
    expect(api.runs).toHaveBeenCalledWith({});
  });

  it('shares one request between concurrent refreshes', async () => {
    const { api, model } = mockApi();
    await Promise.all([model.refresh(), model.refresh(), model.refresh()]);
    expect(api.runs).toHaveBeenCalledTimes(1);
  });

  it('keeps the error message and empties the list when the server fails', async () => {
    const { api, model } = mockApi();
    await model.refresh();
    api.runs.mockRejectedValueOnce(new Error('Forbidden'));
    await model.refresh();
    expect(model.error).toBe('Forbidden');
    expect(model.runs).toEqual([]);
  });

  it('merges filters, resets the page and reloads', async () => {
    const { api, model } = mockApi();
    await model.setQuery({ q: 'tiny', offset: 100 });
    await model.setQuery({ tag: 'fix' });
    expect(api.runs).toHaveBeenLastCalledWith({ q: 'tiny', tag: 'fix', offset: 0 });
    expect(model.query).toEqual({ q: 'tiny', tag: 'fix', offset: 0 });
  });

  it('announces runs that landed since the last refresh', async () => {
    const { api, model } = mockApi();
    const added = jest.fn();
    model.runsAdded.connect((_, ids) => added(ids));
    await model.refresh();
    expect(added).not.toHaveBeenCalled(); // the first load is not "new"
    api.runs.mockResolvedValueOnce(page([run('c'), run('b'), run('a')]));
    await model.refresh();
    expect(added).toHaveBeenCalledWith(['c']);
  });

  it('picks at most two runs for comparison, oldest pick dropped first', () => {
    const { model } = mockApi();
    model.togglePick('a');
    expect(model.canCompare).toBe(false);
    model.togglePick('b');
    expect(model.picked).toEqual(['a', 'b']);
    expect(model.canCompare).toBe(true);
    model.togglePick('c');
    expect(model.picked).toEqual(['b', 'c']);
    model.togglePick('b');
    expect(model.picked).toEqual(['c']);
    model.clearPicks();
    expect(model.picked).toEqual([]);
  });

  it('renames and tags through the API and replaces the row in place', async () => {
    const { api, model } = mockApi();
    await model.refresh();
    api.update.mockResolvedValueOnce(run('a', { name: 'renamed' }));
    await model.rename('a', 'renamed');
    expect(api.update).toHaveBeenCalledWith('a', { name: 'renamed' });
    expect(model.runs.find(r => r.id === 'a')?.name).toBe('renamed');
    api.update.mockResolvedValueOnce(run('a', { tags: ['x', 'y'] }));
    api.runs.mockResolvedValueOnce(
      page([run('b'), run('a', { name: 'renamed', tags: ['x', 'y'] })])
    );
    await model.setTags('a', ['x', 'y']);
    expect(api.update).toHaveBeenLastCalledWith('a', { tags: ['x', 'y'] });
    expect(model.runs.find(r => r.id === 'a')?.tags).toEqual(['x', 'y']);
  });

  it('shows a new tag in the filter at once: tagging reloads the facets', async () => {
    const { api, model } = mockApi();
    await model.refresh();
    api.update.mockResolvedValueOnce(run('a', { tags: ['bf16'] }));
    api.runs.mockResolvedValueOnce(
      page([run('b'), run('a', { tags: ['bf16'] })], {
        facets: { verdicts: [], tags: ['bf16', 'fix'], statuses: ['complete'] }
      })
    );
    await model.setTags('a', ['bf16']);
    expect(model.facets.tags).toContain('bf16');
  });

  it('offers only complete, readable runs to compare with', async () => {
    const runs = [
      run('ok', { abilities: ['view_report', 'download_trace', 'open_perfetto', 'compare'] }),
      run('failed', { status: 'failed', abilities: [] }),
      run('broken', { status: 'broken', abilities: ['download_trace', 'open_perfetto'] }),
      run('self', { abilities: ['view_report', 'compare'] })
    ];
    const { model } = mockApi(runs);
    await model.refresh();
    expect(model.comparable('self').map(r => r.id)).toEqual(['ok']);
  });

  it('deletes, unpicks and reloads', async () => {
    const { api, model } = mockApi();
    await model.refresh();
    model.togglePick('a');
    api.runs.mockResolvedValueOnce(page([run('b')]));
    await model.remove('a');
    expect(api.remove).toHaveBeenCalledWith('a');
    expect(model.picked).toEqual([]);
    expect(model.runs.map(r => r.id)).toEqual(['b']);
  });

  it('polls until stopped, and stops when disposed', async () => {
    jest.useFakeTimers();
    try {
      const { api, model } = mockApi();
      model.startPolling(1000);
      jest.advanceTimersByTime(1000);
      await Promise.resolve();
      expect(api.runs).toHaveBeenCalledTimes(1);
      model.stopPolling();
      jest.advanceTimersByTime(5000);
      expect(api.runs).toHaveBeenCalledTimes(1);
      model.startPolling(1000);
      model.dispose();
      jest.advanceTimersByTime(5000);
      expect(api.runs).toHaveBeenCalledTimes(1);
      expect(model.isDisposed).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });
});
