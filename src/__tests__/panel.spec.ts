/**
 * The sidebar's run rows: a run whose meta.json the server read only in part carries a marker
 * with the server's line, to the mouse (title) and to a screen reader (the label's text and
 * the run button's description); a run read whole carries none.
 */
import { IRunListing } from '../api';
import { IRunsApi, RunsModel } from '../model';
import { GpuProfPanel } from '../panel';

const WARNING =
  'meta.json: tries[0] ignored: Expected `float | null`, got `str` - at `tries[0].median_ms`';

function run(id: string, extra: Partial<IRunListing> = {}): IRunListing {
  return { id, name: id, created: null, status: 'complete', verdict: null, error: null, ...extra };
}

async function mounted(runs: IRunListing[]): Promise<HTMLElement> {
  const api = {
    status: jest.fn().mockResolvedValue({ version: '0.1.0', runs_root: 'runs' }),
    runs: jest.fn().mockResolvedValue({
      runs,
      total: runs.length,
      offset: 0,
      limit: 100,
      facets: { verdicts: [], tags: [], statuses: [] }
    })
  };
  const model = new RunsModel(api as unknown as IRunsApi);
  const panel = new GpuProfPanel(model, { open: jest.fn(), compare: jest.fn() });
  await model.refresh();
  return panel.node;
}

describe('run row warning', () => {
  it("marks a partly read run with the server's line, to mouse and screen reader", async () => {
    const node = await mounted([run('bad', { warning: WARNING }), run('good')]);
    const markers = node.querySelectorAll<HTMLElement>('.jp-gpuprof-run-warning');
    expect(markers.length).toBe(1);
    const marker = markers[0];
    expect(marker.closest('li')?.dataset.runId).toBe('bad');
    expect(marker.classList).toContain('jp-gpuprof-badge');
    expect(marker.title).toBe(WARNING);
    // on screen: the short label, hidden from a screen reader, which reads the full line
    const shown = marker.querySelector('[aria-hidden="true"]');
    expect(shown?.textContent).toBe('⚠ meta partly unreadable');
    const said = marker.querySelector<HTMLElement>('.gpuprof-w-sr');
    expect(said?.textContent).toBe(`meta partly unreadable: ${WARNING}`);
    expect(said?.closest('[aria-hidden]')).toBeNull();
    // the run's button, reached by keyboard, is described by that line
    const button = marker.closest('li')?.querySelector('.jp-gpuprof-run-name');
    expect(button?.getAttribute('aria-describedby')).toBe(said?.id);
    expect(node.querySelector(`[id="${said?.id}"]`)).toBe(said);
  });

  it('puts nothing on a run read whole', async () => {
    const node = await mounted([run('good', { warning: null }), run('old')]);
    expect(node.querySelectorAll('.jp-gpuprof-run-warning').length).toBe(0);
    expect(node.querySelectorAll('[aria-describedby]').length).toBe(0);
  });
});
