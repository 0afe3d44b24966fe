/**
 * The step-time chart's axis, decided once: which steps are outliers drawn clipped at the
 * panel's top (so one 1 s spike never flattens a 2 ms spread), linear or log height, and which
 * y labels are written (never two overprinted). The chart (stepchart.ts) only draws it.
 */
import { ms } from './dom';

/** A step is clipped when it lies this many interquartile ranges above the third quartile... */
export const OUTLIER_IQR = 3;
/** ...and at least this many times the panel's median (so ordinary jitter is never clipped). */
export const OUTLIER_MEDIAN = 1.5;
/** Fewest steps a panel needs before any is called an outlier. */
export const OUTLIER_MIN_N = 4;
/** A linear panel spans at least this share of its median step, so jitter never looks like a spike. */
export const MIN_SPAN_OF_MEDIAN = 0.2;
/** Two y labels closer than this (px) would overprint: only the upper one is written. */
export const LABEL_GAP_PX = 12;
/** Width of one label character (px, the chart's 11 px font), for room and placement. */
export const CHAR_PX = 6.5;

/** A panel's vertical scale: `frac` maps a step time to 0 (bottom) .. 1 (top). */
export interface IStepScale {
  log: boolean;
  /** Drawn range (padded), in ms. */
  lo: number;
  hi: number;
  /** Steps above this are drawn clipped at the top (null: none clipped). */
  cap: number | null;
  frac(v: number): number;
}

/** The `q` quantile (0..1) of ascending `sorted`, linearly interpolated. */
export function quantile(sorted: number[], q: number): number {
  const at = (sorted.length - 1) * q;
  const i = Math.floor(at);
  const j = Math.min(i + 1, sorted.length - 1);
  return sorted[i] + (sorted[j] - sorted[i]) * (at - i);
}

/** The value above which a panel's steps are clipped as outliers, or null when none is. */
export function outlierCap(values: number[]): number | null {
  if (values.length < OUTLIER_MIN_N) {
    return null;
  }
  const sorted = values.slice().sort((a, b) => a - b);
  const q1 = quantile(sorted, 0.25);
  const q3 = quantile(sorted, 0.75);
  const fence = Math.max(q3 + OUTLIER_IQR * (q3 - q1), OUTLIER_MEDIAN * quantile(sorted, 0.5));
  return sorted[sorted.length - 1] > fence ? fence : null;
}

/** The panel's scale: linear with outliers clipped, or log over every step. */
export function stepScale(values: number[], log: boolean): IStepScale {
  if (log) {
    const pos = values.map(v => Math.max(v, 1e-6));
    const lo = Math.min(...pos) / 1.1;
    const hi = Math.max(...pos) * 1.1;
    const [a, b] = [Math.log(lo), Math.log(hi)];
    return {
      log,
      lo,
      hi,
      cap: null,
      frac: v => Math.min(1, Math.max(0, (Math.log(Math.max(v, 1e-6)) - a) / (b - a)))
    };
  }
  const cap = outlierCap(values);
  const shown = cap === null ? values : values.filter(v => v <= cap);
  const min = Math.min(...shown);
  const max = Math.max(...shown);
  const median = quantile(
    shown.slice().sort((a, b) => a - b),
    0.5
  );
  // a spread far smaller than the step is drawn small, not stretched to the panel's height
  const span = Math.max(max - min, MIN_SPAN_OF_MEDIAN * median, 1e-3);
  const lo = Math.max(0, (min + max) / 2 - 0.6 * span);
  const hi = lo + 1.2 * span;
  return { log, lo, hi, cap, frac: v => Math.min(1, Math.max(0, (v - lo) / (hi - lo))) };
}

/** Whether step time `v` lies above the scale (drawn clipped, its value written beside it). */
export function isClipped(scale: IStepScale, v: number): boolean {
  return scale.cap !== null && v > scale.cap;
}

/** One y-axis label: the value it marks and its text. */
export interface IAxisLabel {
  value: number;
  text: string;
}

/**
 * The y labels of a panel `heightPx` tall: the highest and lowest step on the scale, the lower
 * one dropped when it would read the same or sit within `LABEL_GAP_PX` of the upper one.
 */
export function axisLabels(scale: IStepScale, values: number[], heightPx: number): IAxisLabel[] {
  const shown = values.filter(v => !isClipped(scale, v));
  if (!shown.length) {
    return [];
  }
  const top = Math.max(...shown);
  const bottom = Math.min(...shown);
  const out: IAxisLabel[] = [{ value: top, text: ms(top) }];
  const apart = (scale.frac(top) - scale.frac(bottom)) * heightPx;
  if (ms(bottom) !== ms(top) && apart >= LABEL_GAP_PX) {
    out.push({ value: bottom, text: ms(bottom) });
  }
  return out;
}

/** Room (px) left of a panel for its y labels: the widest label and a margin. */
export function labelRoom(labels: IAxisLabel[]): number {
  const widest = Math.max(0, ...labels.map(l => l.text.length));
  return Math.max(36, Math.ceil(widest * CHAR_PX) + 10);
}

/**
 * Where the value label of a clipped step goes: right of its marker at `x` when the text fits
 * before `right`, else ending left of it, never starting before `left`; the text is whole.
 */
export function placeValueLabel(
  x: number,
  text: string,
  left: number,
  right: number
): { x: number; anchor: 'start' | 'end' } {
  const w = text.length * CHAR_PX;
  if (x + 6 + w <= right) {
    return { x: x + 6, anchor: 'start' };
  }
  return { x: Math.max(x - 6, left + w), anchor: 'end' };
}
