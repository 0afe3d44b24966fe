/**
 * The run browser's charts each have a data alternative: the compare view's step-time
 * distributions and the run view's per-rank bars name (aria-details) a captioned table that
 * holds the numbers they draw.
 */
import { GpuProfApi, ICompareSide, IComparison } from '../api';
import { DIST_BINS, distributionWithData, histogram } from '../charts';
import { CompareView } from '../compareview';
import { RunDetail } from '../detail';
import { IRunsApi, RunsModel } from '../model';
import { ddpRunRow, rankWith, summaryWith } from './reportFixture';

/** The element `chart`'s aria-details names inside `root` (null when it names none). */
function dataOf(root: ParentNode, chart: Element | null): Element | null {
  const id = chart?.getAttribute('aria-details');
  return id ? root.querySelector(`[id="${id}"]`) : null;
}

/** The body rows of `table` as cell texts. */
function rowsOf(table: Element | null | undefined): string[][] {
  return Array.from(table?.querySelectorAll('tbody tr') ?? []).map(tr =>
    Array.from(tr.querySelectorAll('td')).map(td => td.textContent ?? '')
  );
}

const BEFORE = [46.1, 46.5, 46.6, 46.4, 47.3, 46.5, 46.9];
const AFTER = [18.3, 18.4, 18.2, 18.5, 18.36];

function side(name: string, steps: number[], median: number): ICompareSide {
  return {
    name,
    label: name,
    run_id: name,
    gpu: 'NVIDIA H200',
    median_ms: median,
    p95_ms: null,
    verdict: { category: 'precision', summary: '', confidence: 'high' },
    findings: [],
    step_ms: steps,
    step_source: 'baseline'
  };
}

function comparison(): IComparison {
  return {
    before: side('tinygpt before', BEFORE, 46.5),
    after: side('tinygpt after', AFTER, 18.36),
    steps: {
      n_before: BEFORE.length,
      n_after: AFTER.length,
      median_before_ms: 46.5,
      median_after_ms: 18.36,
      delta_ms: -28.14,
      delta_pct: -60.5,
      ci_low_ms: -28.3,
      ci_high_ms: -28.0,
      p_value: 1e-6,
      confidence: 0.95,
      verdict: 'significant',
      significant: true,
      direction: 'faster',
      speedup: 2.53
    },
    ops: { regressions: [], improvements: [] },
    kernel_kinds: { regressions: [], improvements: [] },
    findings: { resolved: [], new: [], remaining: [] },
    delta_unit: 'ms_per_step',
    headline: 'The change is real.',
    caveats: []
  };
}

describe('the compare chart’s data table', () => {
  it('lists the chart’s own bins: every step counted once, the medians in its caption', () => {
    const box = document.createElement('div');
    box.append(distributionWithData([BEFORE, AFTER], [46.5, 18.36], ['before', 'after']));
    const chart = box.querySelector('svg.jp-gpuprof-dist');
    const data = dataOf(box, chart);
    expect(data?.tagName).toBe('DETAILS');
    expect(data?.querySelector('summary')?.textContent).toBe('Step-time distributions as a table');
    const table = data?.querySelector('table');
    expect(table?.querySelector('caption')?.textContent).toBe(
      'Steps per step-time bin, before (median 46.50 ms) and after (median 18.36 ms)'
    );
    expect(Array.from(table?.querySelectorAll('th') ?? []).map(t => t.textContent)).toEqual([
      'step time',
      'before',
      'after'
    ]);
    const rows = rowsOf(table);
    const { counts } = histogram([BEFORE, AFTER], DIST_BINS);
    const nonEmpty = counts[0].filter((c, i) => c + counts[1][i] > 0).length;
    expect(rows.length).toBe(nonEmpty);
    expect(rows.reduce((n, r) => n + Number(r[1]), 0)).toBe(BEFORE.length);
    expect(rows.reduce((n, r) => n + Number(r[2]), 0)).toBe(AFTER.length);
    // the first bin starts at the fastest step, the last ends at the slowest, as on the axis
    expect(rows[0][0]).toMatch(/^18\.20 ms – /);
    expect(rows[rows.length - 1][0]).toMatch(/ – 47\.30 ms$/);
  });

  it('is drawn by the compare view under its chart', () => {
    const api = {} as GpuProfApi;
    const view = new CompareView(api, 'a', 'b');
    view.render(comparison());
    const chart = view.node.querySelector('svg.jp-gpuprof-dist');
    const data = dataOf(view.node, chart);
    expect(chart?.nextElementSibling).toBe(data);
    expect(rowsOf(data?.querySelector('table')).length).toBeGreaterThan(1);
    view.dispose();
  });
});

describe('the rank chart’s data table', () => {
  it('is named by the chart and holds each bar’s step, compute and comm times', async () => {
    const run = ddpRunRow();
    const ranks = [
      rankWith({ rank: 0, step_ms: 67.1, compute_ms: 47.9, comm_ms: 48.6, straggler: false }),
      rankWith({ rank: 1, step_ms: 67.14, compute_ms: 66.4, comm_ms: 4.6, straggler: true })
    ];
    const summary = summaryWith({
      distributed: { ranks, imbalance: [], collectives_matched: 0, collectives_unmatched: 0 }
    });
    const api = { summary: jest.fn().mockResolvedValue(summary) } as unknown as GpuProfApi;
    const detail = new RunDetail(api, new RunsModel({} as IRunsApi), run);
    await detail.load();
    const chart = detail.node.querySelector('svg.jp-gpuprof-rankchart');
    const data = dataOf(detail.node, chart);
    expect(data?.tagName).toBe('TABLE');
    expect(data?.querySelector('caption')?.textContent).toBe('Each rank, ms per step');
    const rows = rowsOf(data);
    expect(rows.map(r => r.slice(0, 4))).toEqual([
      ['0', '67.10 ms', '47.90 ms', '48.60 ms'],
      ['1 (straggler)', '67.14 ms', '66.40 ms', '4.60 ms']
    ]);
    // the step time written at each bar's end is the table's, to the same digits
    const ends = Array.from(chart?.querySelectorAll('text') ?? [])
      .map(t => t.textContent ?? '')
      .filter(t => t.endsWith(' ms'));
    expect(ends).toEqual(rows.map(r => r[1]));
    detail.dispose();
  });
});
