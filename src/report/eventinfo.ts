/**
 * What the timeline says about one event and where it says it: the pinned event's details
 * (timeline.ts draws them as a list), which events a search finds, and where a tooltip goes so
 * it never leaves the panel. Pure functions of the summary's data, tested without a browser.
 */
import { ms, us } from './dom';
import { ILaneEvents, IRect } from './lod';
import { ITimeline } from './summary';

/** One line of the pinned event's details: what it is, and its value. */
export type DetailRow = [string, string];

/** The step (of `tl.steps`) holding time `t`, or null. */
function stepAt(tl: Pick<ITimeline, 'steps'>, t: number) {
  return tl.steps.find(st => st.start <= t && t < st.end) ?? null;
}

/**
 * The details of rectangle `r` of lane `li`: its name (or how many events it merges), lane,
 * phase, start within its step, duration, and for GPU work the launching op, its shapes, grid
 * and block, correlation id and where the host launched it.
 */
export function eventRows(
  tl: Pick<ITimeline, 'lanes' | 'steps'>,
  events: ILaneEvents[],
  li: number,
  r: IRect
): DetailRow[] {
  const lane = tl.lanes[li];
  const ev = events[li];
  const rows: DetailRow[] = [
    [
      'Event',
      r.count > 1 ? `${r.count.toLocaleString()} events merged (zoom in to split)` : r.label
    ],
    ['Lane', lane.label]
  ];
  if (r.phase) {
    rows.push(['Phase', r.phase]);
  }
  const st = stepAt(tl, r.start);
  rows.push([
    'Starts',
    st ? `${us(r.start - st.start)} into step ${st.step}` : `${us(r.start)} into the window`
  ]);
  rows.push(['Duration', us(r.end - r.start)]);
  const link = r.count === 1 && r.first !== undefined ? ev.link?.[r.first] : null;
  if (link) {
    const lines: DetailRow[] = [
      ['Launched by', link.op],
      ['Input shapes', link.shape === '[]' ? '' : link.shape],
      ['Launch config', link.config],
      ['Correlation id', link.corr >= 0 ? String(link.corr) : ''],
      [
        'Host launch',
        link.launchAt !== null && link.launchLane >= 0
          ? `${tl.lanes[link.launchLane].label}, ${us(r.start - link.launchAt)} before it ran`
          : ''
      ]
    ];
    rows.push(...lines.filter(([, v]) => v));
  }
  return rows;
}

/** Whether an event named `label` matches search `query` (case-insensitive; '' matches none). */
export function matches(label: string, query: string): boolean {
  const q = query.trim().toLowerCase();
  return q !== '' && label.toLowerCase().includes(q);
}

/** Every event matching `query` as [lane, index in its lane's events], in time order. */
export function searchHits(events: ILaneEvents[], query: string): [number, number][] {
  const hits: [number, number][] = [];
  events.forEach((ev, li) =>
    ev.label.forEach((label, i) => {
      if (matches(label, query)) {
        hits.push([li, i]);
      }
    })
  );
  return hits.sort((a, b) => events[a[0]].start[a[1]] - events[b[0]].start[b[1]]);
}

/**
 * Match `k` (cycling) of `query`: its lane, start and the window that shows it (25 times its
 * width each side, at least 100 µs), or null without a match.
 */
export function nthHit(
  events: ILaneEvents[],
  query: string,
  k: number
): { lane: number; start: number; from: number; to: number } | null {
  const hits = searchHits(events, query);
  if (!hits.length) {
    return null;
  }
  const [lane, i] = hits[k % hits.length];
  const start = events[lane].start[i];
  const dur = events[lane].dur[i];
  const half = Math.max(25 * dur, 100);
  return { lane, start, from: start - half, to: start + dur + half };
}

/**
 * The classes of drawn rectangle `i` of `rects` (a lane's, from `ev`): a search hit when any
 * event it spans matches `query`, dimmed when none does, outlined when it holds the pinned
 * event's start (`pinnedStart`, null: none pinned on this lane).
 */
export function rectClass(
  ev: ILaneEvents,
  rects: IRect[],
  i: number,
  query: string,
  pinnedStart: number | null
): string {
  const r = rects[i];
  const upTo = rects[i + 1]?.first ?? ev.start.length;
  const out = ['gpuprof-w-ev'];
  if (query.trim()) {
    const hit = ev.label.slice(r.first ?? 0, upTo).some(l => matches(l, query));
    out.push(hit ? 'gpuprof-w-hit' : 'gpuprof-w-miss');
  }
  if (pinnedStart !== null && r.start <= pinnedStart && pinnedStart <= r.end) {
    out.push('gpuprof-w-pinned');
  }
  return out.join(' ');
}

/**
 * The tooltip's top-left corner for a pointer at (`x`, `y`) in a panel `width` × `height`:
 * below right of the pointer, flipped to its left or above where it would cross the panel's
 * edge, and never before the panel's start.
 */
export function tipPosition(
  x: number,
  y: number,
  tipW: number,
  tipH: number,
  width: number,
  height: number,
  offset = 12
): { left: number; top: number } {
  let left = x + offset;
  if (left + tipW > width) {
    left = x - offset - tipW;
  }
  let top = y + offset;
  if (top + tipH > height) {
    top = y - offset - tipH;
  }
  return {
    left: Math.max(0, Math.min(left, width - tipW)),
    top: Math.max(0, top)
  };
}

/** The hover text of a drawn rectangle: its event (or how many were merged), phase, duration. */
export function rectTip(r: IRect): string {
  const head = r.count > 1 ? `${r.count.toLocaleString()} events (zoom in to split)` : r.label;
  const phase = r.phase ? `\nphase: ${r.phase}` : '';
  return `${head}${phase}\n${us(r.end - r.start)}`;
}

/** The rank of a lane of a multi-rank timeline (its id starts "rank3:"), else null. */
export function laneRank(id: string): number | null {
  const m = /^rank(\d+):/.exec(id);
  return m ? +m[1] : null;
}

/** How a multi-rank timeline lined its ranks up (the summary's `ranks_aligned_by`), or ''. */
export function alignedLabel(by: string | null | undefined): string {
  return by ? ` · ranks aligned by ${by}` : '';
}

/** "profiled time (×1.52 of real)", or just "profiled time" without a baseline. */
export function scaleLabel(scale: number | null | undefined): string {
  return scale ? `profiled time (×${scale.toFixed(2)} of real)` : 'profiled time';
}

/**
 * The tooltip of the element under the pointer (its `data-*`: a rectangle's lane and index, a
 * gap, a step band), or '' for none. `held`: the steps whose every event is at hand.
 */
export function hoverText(
  tl: Pick<ITimeline, 'lanes' | 'steps' | 'gaps' | 'profiled_scale'>,
  drawn: IRect[][],
  data: DOMStringMap,
  where: { loadable: boolean; hasEvents: (i: number) => boolean; held: number[] }
): string {
  if (data.lane !== undefined) {
    return `${tl.lanes[Number(data.lane)].label}\n${rectTip(drawn[Number(data.lane)][Number(data.i)])}`;
  }
  if (data.gap !== undefined) {
    const i = Number(data.gap);
    return `GPU idle ${us(tl.gaps.dur[i])}: ${tl.gaps.cause[i]}`;
  }
  if (data.step !== undefined) {
    const i = Number(data.step);
    const st = tl.steps[i];
    // without a server, a step the summary does not carry stays merged however far one zooms
    const merged =
      where.hasEvents(i) || where.loadable
        ? ''
        : where.held.length
          ? ` · events merged: every kernel is in step ${where.held.join(', ')}`
          : ' · events merged';
    return `${stepTip(st, i, tl.profiled_scale)} · click to zoom${merged}`;
  }
  return '';
}

/** A step's number as every view counts them (1..n; the profiler's own id stays in `step`). */
export function stepNumber(st: ITimeline['steps'][number], i: number): number {
  return st.number || i + 1;
}

/** A step band's tooltip: its number and its time as the step series states it. */
export function stepTip(
  st: ITimeline['steps'][number],
  i: number,
  scale: number | null | undefined
): string {
  const time = typeof st.dur_ms === 'number' ? ms(st.dur_ms) : us(st.end - st.start);
  return `step ${stepNumber(st, i)}: ${time} (${scaleLabel(scale)}; profiler step #${st.step})`;
}
