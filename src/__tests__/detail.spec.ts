import { GpuProfApi, IRunListing } from '../api';
import { RunDetail } from '../detail';
import { IRunsApi, RunsModel } from '../model';
import { IReportSummary } from '../report/summary';
import { ddpRunRow, opRow, rankWith, realSummary, summaryWith } from './reportFixture';

const PAYLOAD = '<img src=x onerror=alert(1)>';

const run: IRunListing = ddpRunRow({ name: PAYLOAD, tags: ['ddp'] });

function detailWith(summary: IReportSummary) {
  const api = { summary: jest.fn().mockResolvedValue(summary) } as unknown as GpuProfApi;
  const model = new RunsModel({} as IRunsApi);
  return new RunDetail(api, model, run);
}

/** How many buttons of `detail` read `label`. */
function buttonsNamed(detail: RunDetail, label: string): number {
  return Array.from(detail.node.querySelectorAll('button')).filter(b => b.textContent === label)
    .length;
}

describe('RunDetail', () => {
  it('shows a ranks panel with the straggler for distributed runs', async () => {
    const detail = detailWith(
      summaryWith({
        distributed: {
          ranks: [
            rankWith({
              rank: 0,
              step_ms: 67.1,
              compute_ms: 47.9,
              comm_ms: 48.6,
              extra_ms: -18.7,
              phase: null,
              straggler: false
            }),
            rankWith({
              rank: 1,
              step_ms: 67.1,
              compute_ms: 66.4,
              comm_ms: 4.6,
              extra_ms: 18.7,
              phase: 'gpu_work',
              straggler: true
            })
          ],
          imbalance: [],
          collectives_matched: 0,
          collectives_unmatched: 0
        },
        verdict: {
          category: 'straggler',
          label: 'straggler rank',
          confidence: 'high',
          summary: 'rank 1 is slow',
          reasons: []
        }
      })
    );
    await detail.load();
    const ranks = detail.node.querySelector('.jp-gpuprof-ranks');
    expect(ranks?.querySelector('h3')?.textContent).toBe('Ranks (2)');
    expect(ranks?.querySelector('.jp-gpuprof-straggler')?.textContent).toContain('rank 1');
    expect(ranks?.querySelectorAll('tbody tr').length).toBe(2);
    expect(ranks?.querySelector('svg.jp-gpuprof-rankchart')).not.toBeNull();
    const report = detail.node.querySelector('.jp-gpuprof-detail-body .gpuprof-w');
    expect(report?.querySelector('.gpuprof-w-verdict')?.textContent).toContain(
      'Verdict: straggler'
    );
    expect(
      Array.from(report?.querySelectorAll('.gpuprof-w-tab') ?? []).map(t => t.textContent)
    ).toEqual([
      'Step time',
      'GPU timeline',
      'Operators',
      'Kernels',
      'Transfers & syncs',
      'Next steps'
    ]);
    detail.dispose();
  });

  it('has no ranks panel for one process; names from the summary never become markup', async () => {
    const detail = detailWith(
      summaryWith({
        distributed: null,
        source: { ...realSummary().source, name: PAYLOAD },
        ops: [
          opRow({
            name: `<script>alert(2)</script>`,
            calls: 1,
            cpu_total_us: 0,
            cpu_self_us: 0,
            cuda_total_us: 5,
            cuda_self_us: 0,
            input_dims: ''
          })
        ]
      })
    );
    await detail.load();
    expect(detail.node.querySelector('.jp-gpuprof-ranks')?.childElementCount).toBe(0);
    expect(detail.node.querySelector('.jp-gpuprof-detail-title')?.textContent).toBe(PAYLOAD);
    expect(detail.node.querySelector('script')).toBeNull();
    expect(detail.node.querySelector('[onerror]')).toBeNull();
    expect(detail.node.querySelector('.gpuprof-w-title')?.textContent).toBe(
      `GPU profile — ${PAYLOAD}`
    );
    expect(detail.node.querySelector('.gpuprof-w-ops td')?.textContent).toBe(
      '<script>alert(2)</script>'
    );
    detail.dispose();
  });

  it('says why when the run has no report yet', async () => {
    const api = {
      summary: jest.fn().mockRejectedValue(new Error('run is still being written; no report yet'))
    } as unknown as GpuProfApi;
    const detail = new RunDetail(api, new RunsModel({} as IRunsApi), run);
    await detail.load();
    const body = detail.node.querySelector('.jp-gpuprof-detail-body');
    expect(body?.querySelector('p')?.textContent).toBe(
      'No report: run is still being written; no report yet'
    );
    expect(body?.classList.contains('jp-mod-error')).toBe(true);
    // without a report (and its toolbar) the trace stays one click away
    expect(buttonsNamed(detail, 'Download trace')).toBe(1);
    detail.dispose();
  });

  it('offers Download trace once: the report toolbar has it, the header does not', async () => {
    const detail = detailWith(
      summaryWith({ distributed: null, source: { ...realSummary().source, name: 'r' } })
    );
    await detail.load();
    expect(buttonsNamed(detail, 'Download trace')).toBe(1);
    const toolbarButton = Array.from(
      detail.node.querySelectorAll<HTMLButtonElement>('.gpuprof-w-toolbar button')
    ).find(b => b.textContent === 'Download trace');
    // enabled: the run id comes from the sidebar's run even when the summary lacks it
    expect(toolbarButton?.disabled).toBe(false);
    expect(detail.node.querySelector('.jp-gpuprof-actions')?.textContent).not.toContain(
      'Download trace'
    );
    detail.dispose();
  });

  it("leads a failed run's view with its real reason and offers no dead download", async () => {
    const reason =
      'The run failed: no training steps seen: the script never called optimizer.step() ' +
      '(or jupyter_gpuprof.step())';
    const failed: IRunListing = {
      ...run,
      status: 'failed',
      abilities: [],
      unavailable: reason,
      error: 'no training steps seen: the script never called optimizer.step()'
    };
    const api = { summary: jest.fn() } as unknown as GpuProfApi;
    const detail = new RunDetail(api, new RunsModel({} as IRunsApi), failed);
    await detail.load();
    expect(api.summary).not.toHaveBeenCalled(); // no "no trace file (status failed)"
    const header = detail.node.querySelector('.jp-gpuprof-detail-header')!;
    expect(header.children[1].textContent).toBe(reason); // the line under the title
    expect(header.children[1].getAttribute('role')).toBe('alert');
    expect(buttonsNamed(detail, 'Download trace')).toBe(0);
    expect(detail.node.textContent).toContain('This run saved no trace to download.');
    detail.dispose();
  });

  it("says under the title what the server dropped from the run's meta.json", async () => {
    const warning = 'meta.json: tries[0] ignored: Expected `float | null`, got `str`';
    const api = { summary: jest.fn().mockResolvedValue(realSummary()) } as unknown as GpuProfApi;
    const detail = new RunDetail(api, new RunsModel({} as IRunsApi), { ...run, warning });
    await detail.load();
    const header = detail.node.querySelector('.jp-gpuprof-detail-header')!;
    const line = header.children[1];
    expect(line.className).toBe('jp-gpuprof-detail-warning');
    expect(line.textContent).toBe(`⚠ ${warning}`);
    expect(line.querySelector('[aria-hidden="true"]')?.textContent).toBe('⚠ ');
    detail.dispose();
    const whole = new RunDetail(api, new RunsModel({} as IRunsApi), run);
    await whole.load();
    expect(whole.node.querySelector('.jp-gpuprof-detail-warning')).toBeNull();
    whole.dispose();
  });

  it('redraws the report heading when the run is renamed', async () => {
    const model = new RunsModel({
      status: jest.fn().mockResolvedValue({ version: '1', runs_root: '/r' }),
      runs: jest.fn().mockResolvedValue({
        runs: [{ ...run, name: 'train bf16' }],
        total: 1,
        offset: 0,
        limit: 100,
        facets: { verdicts: [], tags: [], statuses: [] }
      })
    } as unknown as IRunsApi);
    const summary = summaryWith({
      distributed: null,
      source: { ...realSummary().source, name: 'train' }
    });
    const api = { summary: jest.fn().mockResolvedValue(summary) } as unknown as GpuProfApi;
    const detail = new RunDetail(api, model, { ...run, name: 'train' });
    await detail.load();
    const title = () => detail.node.querySelector('.gpuprof-w-title')?.textContent;
    expect(title()).toBe('GPU profile — train');
    await model.refresh();
    expect(title()).toBe('GPU profile — train bf16');
    expect(detail.node.querySelector('.jp-gpuprof-detail-title')?.textContent).toBe('train bf16');
    detail.dispose();
  });
});
