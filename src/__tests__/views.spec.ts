import { IComparison, IRankRow } from '../api';
import { histogram, rankChart, straggler } from '../charts';
import { changeLine, changeNote, CompareView, predictionLine } from '../compareview';
import { GpuProfApi } from '../api';
import { rankWith } from './reportFixture';

const PAYLOAD = '<img src=x onerror=alert(1)>';

function comparison(significant: boolean): IComparison {
  const side = (name: string, steps: number[]) => ({
    name,
    run_id: name,
    gpu: 'NVIDIA H200',
    median_ms: steps[1],
    p95_ms: steps[2],
    verdict: { category: 'precision', summary: PAYLOAD, confidence: 'high' },
    findings: [{ id: 'f', category: 'precision', title: PAYLOAD, expected_gain_pct: 40 }],
    step_ms: steps,
    step_source: 'baseline'
  });
  const delta = { name: PAYLOAD, before: 100, after: 10, delta: -90, delta_pct: -90 };
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

  it('says why a comparison is unfair instead of calling a real change noise', () => {
    const c = comparison(false);
    c.steps.verdict = 'unreliable';
    c.steps.unreliable_reasons = ['the GPU was power-capped (sw_power_cap) after'];
    expect(changeNote(c)).toBe(
      'Not a fair comparison: the GPU ran under different conditions (the GPU was ' +
        'power-capped (sw_power_cap) after); measure again before trusting the −60.5%.'
    );
    expect(changeNote(comparison(false))).toContain('within run-to-run noise');
    expect(changeNote(comparison(true))).toContain('The change is real: faster by 60.5%');
  });

  it('tells two runs of one script apart and writes the deltas in ms', () => {
    const view = new CompareView(new GpuProfApi(), 'a', 'b');
    const c = comparison(true);
    c.before.name = c.after.name = 'train';
    c.before.run_id = '20261202-1-train';
    c.after.run_id = '20261202-2-train';
    view.render(c);
    expect(view.node.querySelector('h2')?.textContent).toBe(
      'train (20261202-1-train) → train (20261202-2-train)'
    );
    const head = Array.from(view.node.querySelectorAll('.jp-gpuprof-deltas th')).map(
      th => th.textContent
    );
    expect(head).toContain('before ms/step');
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
