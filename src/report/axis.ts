/** The timeline's view maths and axis: zoom, pan, step-relative ticks in ms or µs. */

/** Never zoom below one microsecond. */
const MIN_SPAN_US = 1;
/** Below this span (µs) the axis may read in µs... */
const MICRO_SPAN_US = 2000;
/** ...when no label would pass this (µs): never a five-digit "40200 µs", "40.2 ms" instead. */
const MICRO_MAX_US = 2000;

/** A visible time range [v0, v1] in µs from the timeline start. */
export interface IView {
  v0: number;
  v1: number;
}

/** The view after zooming by `factor` around time `t`, kept inside [0, dur]. */
export function zoom(view: IView, t: number, factor: number, dur: number): IView {
  const v0 = Math.max(0, t - (t - view.v0) * factor);
  let v1 = Math.min(dur, t + (view.v1 - t) * factor);
  if (v1 - v0 < MIN_SPAN_US) {
    v1 = v0 + MIN_SPAN_US;
  }
  return { v0, v1 };
}

/** The view `from` shifted by `dt` µs, its width kept, inside [0, dur]. */
export function pan(from: IView, dt: number, dur: number): IView {
  const width = from.v1 - from.v0;
  const v0 = Math.min(Math.max(0, from.v0 - dt), dur - width);
  return { v0, v1: v0 + width };
}

/** The view spanning [a, b] (in either order), at least 1 µs wide, inside [0, dur]. */
export function boxView(a: number, b: number, dur: number): IView {
  const v0 = Math.max(0, Math.min(a, b));
  const v1 = Math.min(dur, Math.max(Math.max(a, b), v0 + MIN_SPAN_US));
  return { v0, v1 };
}

/** The view after key `key` (Perfetto's W/S zoom, A/D pan), or null for another key. */
export function keyMove(key: string, view: IView, dur: number): IView | null {
  const mid = (view.v0 + view.v1) / 2;
  const w = view.v1 - view.v0;
  const moves: Record<string, () => IView> = {
    w: () => zoom(view, mid, 0.6, dur),
    s: () => zoom(view, mid, 1 / 0.6, dur),
    a: () => pan(view, 0.2 * w, dur),
    d: () => pan(view, -0.2 * w, dur)
  };
  const move = moves[key.toLowerCase()];
  return move ? move() : null;
}

/** A round tick spacing (1, 2 or 5 × 10^k) giving about `n` ticks over `span`. */
export function tickStep(span: number, n = 6): number {
  const raw = span / n;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  const m = raw / p;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/** One axis tick: where it sits (µs from the timeline start) and its label. */
export interface ITick {
  t: number;
  label: string;
}

/**
 * About `n` ticks over `view`, labelled from `origin` (a step's start): in µs when the view is
 * narrow and close to the origin, else in ms with the decimals the tick spacing needs.
 */
export function ticks(view: IView, origin: number, n = 6): ITick[] {
  const span = view.v1 - view.v0;
  const far = Math.max(Math.abs(view.v0 - origin), Math.abs(view.v1 - origin));
  const micro = span < MICRO_SPAN_US && far <= MICRO_MAX_US;
  const step = tickStep(span, n);
  const out: ITick[] = [];
  const first = Math.ceil((view.v0 - origin) / step) * step + origin;
  const decimals = (v: number) => Math.max(0, -Math.floor(Math.log10(v) + 1e-9));
  for (let t = first; t <= view.v1 + 1e-9; t += step) {
    const rel = t - origin;
    const label = micro
      ? `${rel.toFixed(decimals(step))} µs`
      : `${(rel / 1000).toFixed(decimals(step / 1000))} ms`;
    out.push({ t, label });
  }
  return out;
}
