/** A timeline in the summary's shape with 1,200 kernels per step, for the level-of-detail tests. */
import { IStepDetail, ITimeline } from '../report/summary';

export const KERNELS_PER_STEP = 1200;
export const STEP_US = 62_000;

/**
 * One step's events: a CPU range per phase, then 1,200 kernels (a 150 µs GEMM, then three 10 µs
 * element-wise kernels, 4 µs apart, as in a Llama step), an 800 µs sync gap at 30 ms.
 */
export function stepDetail(nameBase: number): IStepDetail {
  const d: IStepDetail = { lane: [], start_us: [], dur_us: [], name: [], phase: [] };
  const push = (lane: number, start: number, dur: number, name: number, phase: number) => {
    d.lane.push(lane);
    d.start_us.push(start);
    d.dur_us.push(dur);
    d.name.push(name);
    d.phase.push(phase);
  };
  push(0, 0, 20_000, 0, 0);
  push(0, 20_000, 35_000, 1, 1);
  push(0, 55_000, 5000, 2, 2);
  let t = 0;
  for (let k = 0; k < KERNELS_PER_STEP; k++) {
    const dur = k % 4 === 0 ? 150 : 10;
    if (t < 30_000 && t + dur > 30_000) {
      t = 30_800; // the GPU waits on a sync here
    }
    push(1, t, dur, nameBase + k, k < 450 ? 0 : k < 1050 ? 1 : 2);
    t += dur + 4;
  }
  return d;
}

/** Two profiled steps; the first carries its events, the second is left to a server. */
export function bigTimeline(withSecond = false): ITimeline {
  const strings = ['forward', 'backward', 'optimizer'];
  for (let k = 0; k < KERNELS_PER_STEP; k++) {
    strings.push(`sm90_gemm_kernel_${k}`);
  }
  return {
    dur_us: 2 * STEP_US,
    names: ['2 steps of kernels'],
    lanes: [
      {
        id: 'cpu:main',
        label: 'main thread',
        kind: 'ranges',
        n_events: 0,
        start: [],
        dur: [],
        count: [],
        name: []
      },
      {
        id: 'gpu:0:7',
        label: 'stream 7 compute',
        kind: 'gpu',
        n_events: 2 * KERNELS_PER_STEP,
        start: [0, STEP_US],
        dur: [STEP_US - 400, STEP_US - 400],
        count: [KERNELS_PER_STEP, KERNELS_PER_STEP],
        name: [0, 0]
      }
    ],
    n_rects: 2,
    n_events: 2 * KERNELS_PER_STEP,
    max_rects: 20_000,
    n_gaps: 1,
    gaps: { start: [30_000], dur: [800], cause: ['sync'] },
    input_ranges: false,
    steps: [
      { step: 3, start: 0, end: STEP_US },
      { step: 4, start: STEP_US, end: 2 * STEP_US }
    ],
    profiled_scale: 1.52,
    phases: ['forward', 'backward', 'optimizer', 'data', 'other'],
    strings,
    detail: [stepDetail(3), withSecond ? stepDetail(3) : null]
  };
}
