/**
 * Level of detail of the timeline: the events of a lane inside a view become rectangles, a run
 * of narrow events closer than half a pixel merged into one, never across a drawn idle gap; an
 * event a few pixels wide is always its own rectangle. A window narrow enough shows every event
 * as its own named rectangle.
 */
import { IStepDetail, ITimeline } from './summary';

/** What links a GPU event to the host: the flow arrow's tail and the pinned details' lines. */
export interface ILink {
  /** The launching op and its input shapes ('' where unknown). */
  op: string;
  shape: string;
  /** "grid [80, 1, 1] · block [128, 1, 1]" ('' for copies and unknown). */
  config: string;
  /** Correlation id (-1: none). */
  corr: number;
  /** The host launch call: its start (µs from the timeline start) and lane, null when unknown. */
  launchAt: number | null;
  launchLane: number;
}

/** The events of one lane, sorted by start, in µs from the timeline start. */
export interface ILaneEvents {
  start: number[];
  dur: number[];
  label: string[];
  phase: string[];
  /** Events already merged by the summary (1 for a real event). */
  count: number[];
  /** GPU lanes: each event's link to the host (null where the summary has none). */
  link?: (ILink | null)[];
}

/** A drawn rectangle: one event (`count` 1, named) or a merged run of events. */
export interface IRect {
  start: number;
  end: number;
  count: number;
  label: string;
  phase: string;
  /** Index in its lane's events of the event it is (or the first it merges). */
  first?: number;
}

/** One event before sorting into its lane's columns. */
interface IRow {
  start: number;
  dur: number;
  label: string;
  phase: string;
  count: number;
  link: ILink | null;
}

/** Event `i` of step detail `d` (starting at `t0`)'s link, or null when it has none. */
function detailLink(d: IStepDetail, i: number, t0: number, strings: string[]): ILink | null {
  const corr = d.corr?.[i] ?? -1;
  if (corr < 0) {
    return null;
  }
  const at = d.launch_us?.[i] ?? -1;
  const text = (codes: number[] | undefined) => (codes ? (strings[codes[i]] ?? '') : '');
  return {
    op: text(d.op),
    shape: text(d.shape),
    config: text(d.config),
    corr,
    launchAt: at >= 0 ? t0 + at : null,
    launchLane: d.launch_lane?.[i] ?? -1
  };
}

/** Every lane's events: the bounded lanes, with the steps that carry detail replaced by their real events. */
export function laneEvents(
  tl: Pick<ITimeline, 'lanes' | 'names' | 'steps' | 'phases' | 'strings' | 'detail'>,
  extra: Map<number, IStepDetail & { strings: string[] }> = new Map()
): ILaneEvents[] {
  const steps = tl.steps;
  const phases = tl.phases;
  const detailed: { start: number; end: number; d: IStepDetail; strings: string[] }[] = [];
  steps.forEach((st, i) => {
    const own = tl.detail[i];
    const loaded = extra.get(st.step);
    const d = own ?? loaded;
    if (d) {
      detailed.push({
        start: st.start,
        end: st.end,
        d,
        strings: own ? tl.strings : loaded!.strings
      });
    }
  });
  const covered = (a: number, b: number) => detailed.some(x => a >= x.start && b <= x.end);
  return tl.lanes.map((lane, li) => {
    const rows: IRow[] = [];
    const named = (codes: number[] | undefined, i: number) =>
      codes ? (tl.names[codes[i]] ?? '') : '';
    for (let i = 0; i < lane.start.length; i++) {
      const a = lane.start[i];
      if (!covered(a, a + lane.dur[i])) {
        const op = named(lane.op, i);
        const shape = named(lane.shape, i);
        rows.push({
          start: a,
          dur: lane.dur[i],
          label: tl.names[lane.name[i]] ?? '',
          phase: '',
          count: lane.count[i],
          link:
            op || shape ? { op, shape, config: '', corr: -1, launchAt: null, launchLane: -1 } : null
        });
      }
    }
    for (const { start, d, strings } of detailed) {
      for (let i = 0; i < d.lane.length; i++) {
        if (d.lane[i] === li) {
          rows.push({
            start: start + d.start_us[i],
            dur: d.dur_us[i],
            label: strings[d.name[i]] ?? '',
            phase: phases[d.phase[i]] ?? '',
            count: 1,
            link: detailLink(d, i, start, strings)
          });
        }
      }
    }
    rows.sort((p, q) => p.start - q.start);
    return {
      start: rows.map(r => r.start),
      dur: rows.map(r => r.dur),
      label: rows.map(r => r.label),
      phase: rows.map(r => r.phase),
      count: rows.map(r => r.count),
      link: rows.map(r => r.link)
    };
  });
}

/** First index whose start is at or after `t` (binary search). */
function lowerBound(xs: number[], t: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid] < t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

/**
 * An event at least this wide (px) is drawn as its own rectangle whatever its neighbours: GPU
 * kernels run back to back, and merging by distance alone would hide a wide kernel (one that
 * could carry its name) inside a run of its neighbours at every zoom.
 */
export const OWN_RECT_PX = 2;

/**
 * The rectangles of `ev` inside [v0, v1] at `usPerPx`: events narrower than `OWN_RECT_PX` and
 * less than half a pixel apart merge, unless a drawn idle gap (`gapStarts`, sorted) begins
 * between them; wider events stay their own rectangle.
 */
export function lodRects(
  ev: ILaneEvents,
  v0: number,
  v1: number,
  usPerPx: number,
  gapStarts: number[] = []
): IRect[] {
  const tol = usPerPx / 2;
  const ownUs = usPerPx * OWN_RECT_PX;
  const out: IRect[] = [];
  let cur: IRect | null = null;
  // whether `cur` is a run of narrow events (which more narrow events may join)
  let curNarrow = false;
  // a long event (a CPU op) may start well before v0: scan from the first event
  for (let i = 0; i < ev.start.length && ev.start[i] <= v1; i++) {
    const a = ev.start[i];
    const b = a + ev.dur[i];
    if (b < v0) {
      continue;
    }
    const narrow = ev.dur[i] < ownUs;
    if (cur && curNarrow && narrow && a - cur.end <= tol && !gapBetween(gapStarts, cur.end, a)) {
      cur.end = Math.max(cur.end, b);
      cur.count += ev.count[i];
      if (cur.phase !== ev.phase[i]) {
        cur.phase = '';
      }
      continue;
    }
    if (cur) {
      out.push(cur);
    }
    cur = {
      start: a,
      end: b,
      count: ev.count[i],
      label: ev.label[i],
      phase: ev.phase[i],
      first: i
    };
    curNarrow = narrow;
  }
  if (cur) {
    out.push(cur);
  }
  return out;
}

/** Whether a drawn idle gap starts in [a, b]. */
function gapBetween(gapStarts: number[], a: number, b: number): boolean {
  const k = lowerBound(gapStarts, a - 1e-6);
  return k < gapStarts.length && gapStarts[k] <= b + 1e-6;
}

/** A rectangle this wide (px) gets its name written inside. */
export const LABEL_PX = 36;

/** `text` cut to fit `px` pixels of 11 px type ('' when not even a few letters fit). */
export function fit(text: string, px: number): string {
  const n = Math.floor((px - 6) / 6.2);
  return text.length <= n ? text : n >= 4 ? `${text.slice(0, n - 1)}…` : '';
}

/**
 * Where rectangle `r` (drawn from x0 to x1 px, the next one on its lane starting at `next`)
 * writes its name: inside when wide enough; else, for a single event, in the empty lane to its
 * right, so the short kernels of a launch-bound step read by name once zoomed in. Null: no name.
 */
export function placeName(
  r: IRect,
  x0: number,
  x1: number,
  next: number
): { x: number; text: string; inside: boolean } | null {
  if (x1 - x0 >= LABEL_PX) {
    const text = fit(r.count > 1 ? `${r.count} events` : r.label, x1 - x0);
    return text ? { x: x0 + 3, text, inside: true } : null;
  }
  const room = next - x1 - 4;
  if (r.count !== 1 || room < LABEL_PX) {
    return null;
  }
  const text = fit(r.label, room);
  return text ? { x: x1 + 3, text, inside: false } : null;
}
