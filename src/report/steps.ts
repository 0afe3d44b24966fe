/** The "Step time" panel: the step-time chart and the numbers behind it. */
import { linkData, stepData } from './chartData';
import { empty, h, ms, num } from './dom';
import { stepChart } from './stepchart';
import { IReportSummary } from './summary';

/** How the profiled steps compare with the unprofiled baseline. */
function inflationNote(ratio: number): string {
  if (ratio > 1.05) {
    return "(the profiler's own cost).";
  }
  return ratio < 0.95
    ? '(steps overlap less without per-step syncs).'
    : '(no visible profiler cost).';
}

/** Step-time chart, baseline statistics, data-pipeline share, profiler cost. */
export function stepsPanel(sm: IReportSummary): HTMLDivElement {
  const st = sm.steps;
  const profiled = st.profiled;
  const box = h('div');
  if (!st.baseline_ms.length && !st.profiled_ms.length) {
    box.append(empty('No step times were recorded.'));
    return box;
  }
  // profiled step i is the timeline's step i when the timeline holds that many steps
  const linked = Math.min(sm.timeline?.steps.length ?? 0, st.profiled_ms.length);
  box.append(linkData(stepChart(st, linked), stepData(st)));
  // steps are numbered 1..n on every surface (the model's `outlier_steps`)
  const outliers = (st.outlier_steps ?? []).map(n => `step ${n}`).join(', ') || 'none';
  const which = st.source === 'baseline' ? 'Baseline' : 'Profiled';
  box.append(
    h(
      'p',
      { class: 'gpuprof-w-stepstats' },
      `${which} median ${ms(st.median_ms)}, p95 ${ms(st.p95_ms)}, min ${ms(st.min_ms)}, max ${ms(st.max_ms)}; outliers: ${outliers}.`
    )
  );
  const input = sm.input;
  if (input.host_share_pct >= 1) {
    box.append(
      h(
        'p',
        {},
        `Data pipeline: ${num(input.host_share_pct, 0)}% of the host timeline (${num(input.ms_per_step, 1)} ms per profiled step).`
      )
    );
  }
  if (profiled.n && st.source === 'baseline') {
    const ratio = st.profiler_inflation ?? 0;
    box.append(
      h(
        'p',
        { class: 'gpuprof-w-profiled' },
        `Profiled steps: median ${ms(profiled.median_ms)} = ${num(ratio, 2)}× the baseline ${inflationNote(ratio)}`
      )
    );
  }
  if (st.capture_cost) {
    // the model's sentence (report/summarize.py `_capture_cost`), as the text report prints it
    box.append(h('p', { class: 'gpuprof-w-capture-cost' }, `${st.capture_cost.sentence}.`));
  }
  return box;
}
