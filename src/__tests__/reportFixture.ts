/** A small summary in the shape of `Report.to_json()`, for the report panel tests. */
import { IReportSummary } from '../report/summary';

export const PAYLOAD = '<img src=x onerror=alert(1)>';

/** A GPU run with a timeline, three ops, a copy, syncs and two findings. */
export function sampleSummary(): IReportSummary {
  return {
    source: { name: 'tiny run', path: '/tmp/t.json.gz', status: 'complete' },
    steps: {
      n: 5,
      median_ms: 10,
      p95_ms: 12.5,
      iqr_ms: 1.25,
      min_ms: 9,
      max_ms: 13,
      outliers: [4],
      source: 'baseline',
      baseline: { n: 5 },
      profiled: { n: 3, median_ms: 12 },
      profiler_inflation: 1.2,
      baseline_ms: [9, 10, 10, 11, 13],
      profiled_ms: [12, 12, 12],
      warmup_ms: []
    },
    gpu: {
      available: true,
      busy_pct: 40,
      busy_pct_real: 35,
      busy_ms_per_step: 4,
      idle_by_cause_ms: { input: 5, sync: 0.001 }
    },
    verdict: {
      category: 'input',
      confidence: 'high',
      summary: 'The GPU waits for data.',
      reasons: ['r1', 'r2']
    },
    findings: [
      {
        id: 'loader',
        category: 'input',
        title: 'Use more DataLoader workers',
        evidence: 'input 5 ms per step',
        fix: 'DataLoader(ds, num_workers=4)',
        cost_ms: 5,
        expected_gain_pct: 41.6,
        try_fixes: ['loader']
      }
    ],
    ops: [
      {
        name: 'aten::mm',
        calls: 10,
        cpu_total_us: 50,
        cpu_self_us: 20,
        cuda_total_us: 3000,
        cuda_self_us: 3000,
        input_dims: '[[4, 4]]'
      },
      {
        name: 'aten::add',
        calls: 30,
        cpu_total_us: 90,
        cpu_self_us: 90,
        cuda_total_us: 100,
        cuda_self_us: 100,
        input_dims: ''
      },
      {
        name: PAYLOAD,
        calls: 2,
        cpu_total_us: 500,
        cpu_self_us: 500,
        cuda_total_us: 0,
        cuda_self_us: 0,
        input_dims: ''
      }
    ],
    transfers: [
      { kind: 'HtoD', pageable: true, count: 3, bytes: 4e6, dur_us: 390, gbps: 10.26, blocking: 3 }
    ],
    syncs: {
      count: 6,
      per_step: 2,
      cost_ms_per_step: 0.75,
      top: [{ caller: 'loss.item()', calls: 3, gpu_idle_after_us: 1500, cost_ms_per_step: 0.75 }]
    },
    input: { host_share_pct: 42, ms_per_step: 5 },
    timeline: {
      dur_us: 10000,
      names: ['ampere_sgemm', 'aten::mm', '[[4, 4]]', 'data', ''],
      lanes: [
        {
          label: 'CPU ranges (phases, data)',
          kind: 'ranges',
          start: [0],
          dur: [4000],
          count: [1],
          name: [3]
        },
        {
          label: 'GPU 0 stream 7',
          kind: 'gpu',
          start: [5000, 8000],
          dur: [500, 1500],
          count: [1, 3],
          name: [0, 0],
          op: [1, 4],
          shape: [2, 4]
        }
      ],
      n_rects: 3,
      n_events: 5,
      gaps: { start: [0], dur: [5000], cause: ['input'] }
    }
  };
}
