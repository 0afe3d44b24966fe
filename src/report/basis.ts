/**
 * One basis for every time of a report: per real step (the default) or summed over the
 * profiled steps. Panels ask the basis to convert and to title their columns, so a number and
 * its unit read the same in every tab. Per real step means what Python's per-step columns mean
 * (jupyter_gpuprof/report/basis.py): device time divided by the step count (the profiler does
 * not slow the GPU), host time also rescaled from the profiled step to the real one.
 */
import { ms } from './dom';
import { IReportSummary } from './summary';

/** Which basis the report shows. */
export type BasisKind = 'step' | 'total';

/** Conversions and wording of one basis. */
export interface IBasis {
  kind: BasisKind;
  /** Profiled steps the totals cover. */
  steps: number;
  /** Column and chart titles say this: "ms per real step" or "ms, total of 5 profiled steps". */
  title: string;
  /** A per-step figure in ms, shown on this basis. */
  ms(perStepMs: number | null | undefined): string;
  /** A total over the profiled steps in µs, as ms on this basis. */
  total(totalUs: number | null | undefined): string;
  /** A total over the profiled steps in µs, as µs on this basis (for sorting and charts). */
  value(totalUs: number | null | undefined): number;
  /** A host (CPU) total over the profiled steps in µs, as ms on this basis. */
  host(totalUs: number | null | undefined): string;
  /** A host total over the profiled steps in µs, as µs on this basis. */
  hostValue(totalUs: number | null | undefined): number;
}

/** Profiled step over real step (`basis.profiled_scale`), 1 when the summary does not say. */
export function profiledScale(sm: IReportSummary): number {
  const scale = sm.basis.profiled_scale;
  return scale !== null && scale > 0 ? scale : 1;
}

/** How many profiled steps the summary's totals cover (1 when unknown, so nothing is divided by 0). */
export function profiledSteps(sm: IReportSummary): number {
  return sm.steps.profiled.n || sm.timeline?.steps.length || 1;
}

/** The basis `kind` for summary `sm`. */
export function makeBasis(sm: IReportSummary, kind: BasisKind): IBasis {
  const steps = profiledSteps(sm);
  const perStep = kind === 'step';
  const value = (t: number | null | undefined) => (t ?? 0) / (perStep ? steps : 1);
  // the host runs slower under the profiler: per real step takes that out
  const hostValue = (t: number | null | undefined) => value(t) / (perStep ? profiledScale(sm) : 1);
  const show = (v: (t: number) => number) => (t: number | null | undefined) =>
    t === null || t === undefined ? 'n/a' : ms(v(t) / 1000);
  return {
    kind,
    steps,
    title: perStep
      ? 'ms per real step'
      : `ms, total of ${steps} profiled step${steps === 1 ? '' : 's'}`,
    ms: v => (v === null || v === undefined ? 'n/a' : ms(perStep ? v : v * steps)),
    total: show(value),
    value,
    host: show(hostValue),
    hostValue
  };
}
