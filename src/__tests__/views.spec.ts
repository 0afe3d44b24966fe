import { IComparison, IRankRow } from '../api';
import { histogram, rankChart, straggler } from '../charts';
import { changeLine, changeNote, CompareView, predictionLine } from '../compareview';
import { GpuProfApi } from '../api';
import { rankWith } from './reportFixture';

const PAYLOAD = '<img src=x onerror=alert(1)>';

function comparison(significant: boolean): IComparison {
  const side = (name: string, steps: number[]) => ({
    name,
    label: name,
    run_id: name,
    gpu: 'NVIDIA H200',
    median_ms: steps[1],
    p95_ms: steps[2],
    verdict: { category: 'precision', summary: PAYLOAD, confidence: 'high' },
    findings: [{ id: 'f', category: 'precision', title: PAYLOAD, expected_gain_pct: 40 }],
    step_ms: steps,
    step_source: 'baseline'
  });
  const delta = { name: PAYLOAD, before_ms: 0.1, after_ms: 0.01, delta_ms: -0.09, delta_pct: -90 };
  return {
    before: side('before', [46.1, 46.5, 47.3]),
    after: side('after', [18.0, 18.4, 20.5]),
    steps: {
      n_before: 3,
      n_after: 3,
      median_before_ms: 46.519,
      median_after_ms: 18.359,
      delta_ms: -28.16,
      delta_pct: -60.53,
      ci_low_ms: -29.16,
      ci_high_ms: -27.55,
      p_value: 3.0e-11,
      confidence: 0.95,
      verdict: significant ? 'significant' : 'noise',
      significant,
      direction: significant ? 'faster' : 'unchanged',
      speedup: 2.53
    },
    ops: { regressions: [], improvements: [delta] },
    kernel_kinds: { regressions: [], improvements: [{ ...delta, name: 'gemm' }] },
    findings: { resolved: ['fp32-matmuls'], new: [], remaining: [] },
    delta_unit: 'ms_per_step',
    headline: significant
      ? 'The change is real: after is 60.5% faster (×2.53).'
      : 'No real change: the 60.5% difference is run-to-run noise (p = 0.3 is not below 0.05).',
    caveats: [],
    prediction: {
      resolved: [
        {
          id: 'fp32-matmuls',
          category: 'precision',
          title: PAYLOAD,
          expected_gain_pct: 41.1,
          measured_gain_pct: null
        }
      ],
      measured_gain_pct: 60.53,
      ci_low_gain_pct: 59.22,
      ci_high_gain_pct: 62.68,
      verdict: significant ? 'significant' : 'noise'
    }
  };
}

describe('compare view', () => {
  it('states the median change with its interval', () => {
    expect(changeLine(comparison(true))).toBe(
      'Median 46.52 ms → 18.36 ms: −28.16 ms (−60.5%), 95% CI [−29.16 ms, −27.55 ms], p = 3.0e-11'
    );
  });

  it("puts the before run's prediction beside the measured gain (prediction_line)", () => {
    expect(predictionLine(comparison(true))).toBe(
      'Predicted by the before run: [precision] ≈41%; measured here: gain +60.5% ' +
        '95% CI [+59.2%, +62.7%] (significant)'
    );
    const c = comparison(true);
    c.prediction!.resolved[0].measured_gain_pct = 58;
    expect(predictionLine(c)).toContain('[precision] ≈41% (its try measured 58%)');
    c.prediction!.resolved = [];
    expect(predictionLine(c)).toBeNull();
  });

  it("leads with the comparison's own headline, caveat included, never re-deciding it", () => {
    const c = comparison(true);
    c.headline =
      'The change is real: after is 57.7% faster (×2.36); the GPU was power-capped on both ' +
      "sides (sw_power_cap), so both step times are above the GPU's best, the change between them stands.";
    expect(changeNote(c)).toBe(c.headline);
    const view = new CompareView(new GpuProfApi(), 'a', 'b');
    view.render(c);
    expect(view.node.querySelector('.jp-gpuprof-change-note')?.textContent).toBe(c.headline);
    expect(view.node.textContent).not.toContain('noise');
    view.dispose();
  });

  it('tells two runs of one script apart and writes the deltas in ms', () => {
    const view = new CompareView(new GpuProfApi(), 'a', 'b');
    const c = comparison(true);
    c.before.name = c.after.name = 'train';
    c.before.label = 'train · 2026-11-29 19:13';
    c.after.label = 'train · 2026-11-30 08:01';
    view.render(c);
    expect(view.node.querySelector('h2')?.textContent).toBe(
      'train · 2026-11-29 19:13 → train · 2026-11-30 08:01'
    );
    expect(view.title.label).not.toBe('train → train');
    const head = Array.from(view.node.querySelectorAll('.jp-gpuprof-deltas th')).map(
      th => th.textContent
    );
    expect(head).toContain('before ms/step');
    // each delta table says what it holds to a screen reader: its heading's words
    const tables = Array.from(view.node.querySelectorAll('.jp-gpuprof-deltas')).filter(box =>
      box.querySelector('table')
    );
    expect(tables.length).toBeGreaterThan(0);
    for (const box of tables) {
      expect(box.querySelector('table > caption')?.textContent).toBe(
        box.querySelector('h4')?.textContent
      );
    }
    const cells = Array.from(view.node.querySelectorAll('.jp-gpuprof-deltas td')).map(
      td => td.textContent
    );
    expect(cells).toEqual(expect.arrayContaining(['0.10 ms', '10 µs', '−90 µs (−90.0%)']));
    view.dispose();
  });

  it('renders the verdict badge, the chart, and trace names as text only', () => {
    const view = new CompareView(new GpuProfApi(), 'before', 'after');
    view.render(comparison(true));
    const node = view.node;
    expect(node.querySelector('.jp-gpuprof-verdict-significant')?.textContent).toBe('significant');
    expect(node.querySelectorAll('svg.jp-gpuprof-dist rect').length).toBeGreaterThan(2);
    expect(node.querySelector('img')).toBeNull();
    expect(node.textContent).toContain(PAYLOAD);
    view.render(comparison(false));
    expect(node.querySelector('.jp-gpuprof-verdict-noise')?.textContent).toBe('noise');
    view.dispose();
  });
});

describe('charts', () => {
  it('bins both samples on one axis', () => {
    const { lo, hi, counts } = histogram(
      [
        [1, 2, 3],
        [3, 4]
      ],
      3
    );
    expect([lo, hi]).toEqual([1, 4]);
    expect(counts).toEqual([
      [1, 1, 1],
      [0, 0, 2]
    ]);
    expect(histogram([[], []], 2).counts).toEqual([
      [0, 0],
      [0, 0]
    ]);
  });

  it('shows the straggler the advice flagged and draws one bar pair per rank', () => {
    const ranks: IRankRow[] = [
      rankWith({
        rank: 0,
        step_ms: 67,
        compute_ms: 48,
        comm_ms: 49,
        extra_ms: -18.7,
        phase: null,
        straggler: false
      }),
      rankWith({
        rank: 1,
        step_ms: 67,
        compute_ms: 66,
        comm_ms: 5,
        extra_ms: 18.7,
        phase: 'gpu_work',
        straggler: true
      })
    ];
    expect(straggler(ranks)).toBe(1);
    // late, but not flagged by the advice: no straggler (the front end never re-decides)
    expect(straggler([rankWith({ rank: 0, extra_ms: 3, straggler: false })])).toBeNull();
    const chart = rankChart(ranks);
    expect(chart.querySelectorAll('rect.jp-gpuprof-bar-comm').length).toBe(2);
    expect(chart.textContent).toContain('rank 1 ⚠');
  });
});
