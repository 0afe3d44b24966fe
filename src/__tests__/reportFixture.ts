/// <reference types="node" />
/**
 * Summaries for the report panel tests, complete as the Python report model writes them: a
 * committed real summary (tests/data/expected/<name>.summary.json, which tests/report/test_model.py
 * holds to Python's answer) with the blocks a test is about replaced.
 */
import * as fs from 'fs';
import * as path from 'path';

import { IRunListing } from '../api';
import { IOpRow, IRankRow, IReportSummary, IStepStats, ISteps } from '../report/summary';

export const PAYLOAD = '<img src=x onerror=alert(1)>';

const EXPECTED = path.join(__dirname, '..', '..', 'tests', 'data', 'expected');
const texts = new Map<string, string>();

/**
 * A committed real summary, a fresh copy on each call (tests may change it): `compute` (one GPU,
 * compute-bound, with a timeline) or `ddp_workload_comm` (two ranks).
 */
/** A complete two-rank run's list row (the run browser's tests), with `overrides`. */
export function ddpRunRow(overrides: Partial<IRunListing> = {}): IRunListing {
  return {
    id: '20261129-194000-ddp',
    name: 'ddp',
    created: '2026-11-29T19:40:00+00:00',
    status: 'complete',
    verdict: null,
    error: null,
    gpu: 'NVIDIA H200',
    median_ms: 67.1,
    p95_ms: 68.0,
    tags: [],
    ...overrides
  };
}

export function realSummary(name: 'compute' | 'ddp_workload_comm' = 'compute'): IReportSummary {
  let text = texts.get(name);
  if (text === undefined) {
    text = fs.readFileSync(path.join(EXPECTED, `${name}.summary.json`), 'utf8');
    texts.set(name, text);
  }
  return JSON.parse(text) as IReportSummary;
}

/** The real compute summary with the top-level blocks in `overrides` replaced. */
export function summaryWith(overrides: Partial<IReportSummary>): IReportSummary {
  return { ...realSummary(), ...overrides };
}

/** Statistics of `n` steps that all took `ms` (null: no steps, nothing to state). */
export function stepStats(n: number, ms: number | null = null): IStepStats {
  return {
    n,
    median_ms: ms,
    p95_ms: ms,
    mean_ms: ms,
    min_ms: ms,
    max_ms: ms,
    q1_ms: ms,
    q3_ms: ms,
    iqr_ms: ms === null ? null : 0,
    outliers: []
  };
}

/** The steps of a capture that timed none. */
export function noSteps(): ISteps {
  return {
    ...stepStats(0),
    source: 'trace',
    timing: null,
    baseline: stepStats(0),
    profiled: stepStats(0),
    profiler_inflation: null,
    warmup_ms: [],
    baseline_ms: [],
    profiled_ms: []
  };
}

/** A summary with nothing recorded: no steps, timeline, operators, kernels, copies or findings. */
export function emptySummary(): IReportSummary {
  return summaryWith({
    steps: noSteps(),
    timeline: null,
    ranks: [],
    ops: [],
    kernels: [],
    kernel_kinds: [],
    transfers: [],
    findings: []
  });
}

/** The op columns a test sets. */
type OpTotals = Pick<
  IOpRow,
  | 'name'
  | 'calls'
  | 'cpu_total_us'
  | 'cpu_self_us'
  | 'cuda_total_us'
  | 'cuda_self_us'
  | 'input_dims'
>;

/** An op row from its totals over `steps` profiled steps of `stepMs` (Python's per-step columns). */
export function opRow(r: OpTotals, steps = 3, stepMs = 10, gpuUs = 10000): IOpRow {
  const perStep = (us: number) => us / steps / 1000;
  return {
    input_types: '',
    autograd: '',
    ...r,
    calls_per_step: r.calls / steps,
    cuda_self_ms_per_step: perStep(r.cuda_self_us),
    cuda_total_ms_per_step: perStep(r.cuda_total_us),
    cpu_self_ms_per_step: perStep(r.cpu_self_us),
    cuda_us_per_call: r.cuda_self_us / Math.max(r.calls, 1),
    cpu_us_per_call: r.cpu_self_us / Math.max(r.calls, 1),
    gpu_pct_of_step: (100 * perStep(r.cuda_self_us)) / stepMs,
    cpu_pct_of_step: (100 * perStep(r.cpu_self_us)) / stepMs,
    pct_of_gpu: (100 * r.cuda_self_us) / gpuUs
  };
}

/** A rank row of the committed two-rank run with the fields in `overrides` replaced. */
export function rankWith(overrides: Partial<IRankRow> & Pick<IRankRow, 'rank'>): IRankRow {
  const ranks = realSummary('ddp_workload_comm').distributed?.ranks ?? [];
  if (!ranks.length) {
    throw new Error('the two-rank summary has lost its ranks');
  }
  return { ...ranks[0], ...overrides };
}

/** A GPU run with a timeline, three ops, a copy, syncs and one finding. */
export function sampleSummary(): IReportSummary {
  const real = realSummary();
  return summaryWith({
    source: { ...real.source, name: 'tiny run', path: '/tmp/t.json.gz', status: 'complete' },
    steps: {
      n: 5,
      median_ms: 10,
      p95_ms: 12.5,
      mean_ms: 10.6,
      min_ms: 9,
      max_ms: 13,
      q1_ms: 10,
      q3_ms: 11.25,
      iqr_ms: 1.25,
      outliers: [4],
      outlier_steps: [5],
      source: 'baseline',
      timing: null,
      // the baseline's median stays unstated, so the chart draws a median only where a test sets one
      baseline: stepStats(5),
      profiled: stepStats(3, 12),
      profiler_inflation: 1.2,
      baseline_ms: [9, 10, 10, 11, 13],
      profiled_ms: [12, 12, 12],
      warmup_ms: []
    },
    gpu: {
      available: true,
      busy_pct: 40,
      idle_pct: 60,
      busy_pct_real: 35,
      busy_ms_per_step: 4,
      idle_ms_per_step: 5.001,
      idle_by_cause_ms: { input: 5, transfer: 0, sync: 0.001, launch: 0, host: 0 },
      streams: []
    },
    verdict: {
      category: 'input',
      label: 'input',
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
        data: {},
        try_fixes: ['loader'],
        cost_line:
          'costs 5.00 ms of the 10.00 ms step; predicted step 10.00 ms → 5.84 ms, gain ≈42%'
      }
    ],
    ops: [
      {
        ...opRow({
          name: 'aten::mm',
          calls: 10,
          cpu_total_us: 50,
          cpu_self_us: 20,
          cuda_total_us: 3000,
          cuda_self_us: 3000,
          input_dims: '[[4, 4]]'
        }),
        // two shapes: 7 + 3 calls over 3 steps; the one kernel it launched
        shapes: [
          {
            input_dims: '[[4, 4]]',
            calls: 7,
            calls_per_step: 7 / 3,
            cuda_self_ms_per_step: 0.7,
            pct_of_gpu: 21
          },
          {
            input_dims: '[[8, 8]]',
            calls: 3,
            calls_per_step: 1,
            cuda_self_ms_per_step: 0.3,
            pct_of_gpu: 9
          }
        ],
        kernels: [
          {
            name: 'void ampere_sgemm<float, 4>(int)',
            short_name: 'ampere_sgemm',
            calls_per_step: 10 / 3,
            ms_per_step: 1
          }
        ]
      },
      opRow({
        name: 'aten::add',
        calls: 30,
        cpu_total_us: 90,
        cpu_self_us: 90,
        cuda_total_us: 100,
        cuda_self_us: 100,
        input_dims: ''
      }),
      opRow({
        name: PAYLOAD,
        calls: 2,
        cpu_total_us: 500,
        cpu_self_us: 500,
        cuda_total_us: 0,
        cuda_self_us: 0,
        input_dims: ''
      })
    ],
    kernels: [],
    kernel_kinds: [],
    transfers: [
      {
        kind: 'HtoD',
        pageable: true,
        count: 3,
        bytes: 4e6,
        dur_us: 390,
        gbps: 10.26,
        blocking: 3,
        count_per_step: 1,
        ms_per_step: 0.13
      }
    ],
    syncs: {
      count: 6,
      per_step: 2,
      cost_ms_per_step: 0.75,
      top: [
        {
          caller: 'loss.item()',
          calls: 3,
          gpu_idle_after_us: 1500,
          cost_ms_per_step: 0.75,
          calls_per_step: 1
        }
      ]
    },
    memory: {
      peaks: [],
      max_memory_allocated_bytes: null,
      peak_bytes: null,
      gpu_total_bytes: null
    },
    flops: { ...real.flops, per_step: null, achieved_tflops: null, mfu_pct: null },
    input: { host_share_pct: 42, ms_per_step: 5 },
    ranks: [],
    distributed: null,
    timeline: {
      dur_us: 10000,
      names: ['ampere_sgemm', 'aten::mm', '[[4, 4]]', 'data', ''],
      lanes: [
        {
          id: 'cpu:ranges',
          label: 'CPU ranges (phases, data)',
          kind: 'ranges',
          n_events: 1,
          start: [0],
          dur: [4000],
          count: [1],
          name: [3]
        },
        {
          id: 'gpu:0:7',
          label: 'GPU 0 stream 7',
          kind: 'gpu',
          n_events: 4,
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
      max_rects: 20000,
      n_gaps: 1,
      gaps: { start: [0], dur: [5000], cause: ['input'] },
      steps: [],
      input_ranges: true,
      profiled_scale: null,
      phases: [],
      strings: [],
      detail: []
    },
    // a profiled step as long as the real one, as the sample's other figures are stated
    basis: {
      default: 'real_step',
      n_profiled_steps: 3,
      real_step_ms: 10,
      real_source: 'baseline',
      profiled_step_ms: 10,
      profiled_scale: null,
      tables: {},
      ops_sorted_by: 'cuda_self_us'
    },
    cost: null,
    conditions: null,
    conditions_by_phase: null,
    tries: null,
    one_time: [],
    warnings: []
  });
}

/** `summary.memory`'s blocks the model made from an H200 recording (tests/memory_fixture.py). */
export function memoryBlocks(
  name: 'gpt2' | 'oom'
): Pick<IReportSummary['memory'], 'over_step' | 'oom'> {
  const all = JSON.parse(fs.readFileSync(path.join(EXPECTED, 'memory.json'), 'utf8'));
  return all[name];
}

/** The real compute summary with the memory blocks of recording `name`. */
export function summaryWithMemory(name: 'gpt2' | 'oom'): IReportSummary {
  const sm = realSummary();
  return { ...sm, memory: { ...sm.memory, ...memoryBlocks(name) } };
}
