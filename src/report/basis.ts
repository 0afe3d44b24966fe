/**
 * One basis for every time of a report: per step (the default) or summed over the profiled
 * steps. Panels ask the basis to convert and to title their columns, so a number and its unit
 * read the same in every tab.
 */
import { IReportSummary } from './summary';

/** Which basis the report shows. */
export type BasisKind = 'step' | 'total';

/** Conversions and wording of one basis. */
export interface IBasis {
  kind: BasisKind;
  /** Profiled steps the totals cover. */
  steps: number;
  /** Column and chart titles say this: "per step" or "total of 5 profiled steps". */
  title: string;
  /** A per-step figure in ms, shown on this basis. */
  ms(perStepMs: number | null | undefined): string;
  /** A total over the profiled steps in µs, as ms on this basis. */
  total(totalUs: number | null | undefined): string;
  /** A total over the profiled steps in µs, as µs on this basis (for sorting and charts). */
  value(totalUs: number | null | undefined): number;
}

/** How many profiled steps the summary's totals cover (1 when unknown, so nothing is divided by 0). */
export function profiledSteps(sm: IReportSummary): number {
  const tl = sm.timeline as { steps?: unknown[] } | null | undefined;
  return sm.steps?.profiled?.n || tl?.steps?.length || 1;
}

/** Milliseconds with as many decimals as a small number needs. */
export function fmtMs(v: number): string {
  const a = Math.abs(v);
  return `${v.toFixed(a >= 100 ? 1 : a >= 0.1 ? 2 : 3)} ms`;
}

/** The basis `kind` for summary `sm`. */
export function makeBasis(sm: IReportSummary, kind: BasisKind): IBasis {
  const steps = profiledSteps(sm);
  const perStep = kind === 'step';
  const value = (t: number | null | undefined) => (t ?? 0) / (perStep ? steps : 1);
  return {
    kind,
    steps,
    title: perStep ? 'ms per step' : `ms, total of ${steps} profiled step${steps === 1 ? '' : 's'}`,
    ms: v => (v === null || v === undefined ? 'n/a' : fmtMs(perStep ? v : v * steps)),
    total: t => (t === null || t === undefined ? 'n/a' : fmtMs(value(t) / 1000)),
    value
  };
}
