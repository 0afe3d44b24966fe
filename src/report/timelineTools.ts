/**
 * The timeline's controls around the chart: the search box, the pinned event's details and the
 * colour legend. timeline.ts decides what they hold; these only build and fill the DOM.
 */
import { GAP_CAUSES } from '../generated/palette';
import { color } from './colors';
import { h, s } from './dom';
import { DetailRow } from './eventinfo';
import { ILaneEvents } from './lod';

/** How to move around the timeline, above it. */
export const HINT =
  'Ctrl/⌘+wheel or W/S: zoom · A/D: pan · drag: box zoom · click a step: zoom to it · click an event: pin its details · double-click: reset';

/** Phases the legend lists (an event's colour), in the order the model names them. */
export const PHASE_KEYS = ['forward', 'backward', 'optimizer', 'data', 'other'];

/** The pinned event's panel: `show` fills it, `clear` (or its Unpin button) empties it. */
export function pinPanel(onUnpin: () => void): {
  el: HTMLDivElement;
  show(rows: DetailRow[]): void;
  clear(): void;
} {
  const el = h('div', {
    class: 'gpuprof-w-pinpanel',
    role: 'region',
    'aria-label': 'Pinned event'
  });
  el.hidden = true;
  const clear = () => {
    el.replaceChildren();
    el.hidden = true;
  };
  const show = (rows: DetailRow[]) => {
    const list = h('dl', { class: 'gpuprof-w-pinrows' });
    for (const [k, v] of rows) {
      list.append(h('dt', {}, k), h('dd', {}, v));
    }
    const unpin = h(
      'button',
      { type: 'button', class: 'gpuprof-w-toolbtn', 'aria-label': 'Unpin the event' },
      'Unpin'
    );
    unpin.addEventListener('click', () => {
      clear();
      onUnpin();
    });
    el.replaceChildren(
      h('div', { class: 'gpuprof-w-pinhead' }, 'Pinned event (Esc unpins) ', unpin),
      list
    );
    el.hidden = false;
  };
  return { el, show, clear };
}

/**
 * The search box: typing highlights the events whose name holds the text (`onQuery` answers
 * how many), Enter jumps to the next one (`onNext`).
 */
export function searchBox(onQuery: (q: string) => number, onNext: () => void): HTMLLabelElement {
  const count = h('span', { class: 'gpuprof-w-searchcount', 'aria-live': 'polite' });
  const input = h('input', {
    type: 'search',
    class: 'gpuprof-w-search',
    placeholder: 'Find events by name',
    'aria-label': 'Find events by name (Enter: next match)'
  });
  input.addEventListener('input', () => {
    const n = onQuery(input.value);
    count.textContent = input.value.trim()
      ? `${n.toLocaleString()} ${n === 1 ? 'match' : 'matches'}`
      : '';
  });
  input.addEventListener('keydown', ev => {
    if (ev.key === 'Enter') {
      ev.preventDefault();
      onNext();
    }
  });
  return h('label', { class: 'gpuprof-w-searchbox' }, input, count);
}

/** The colour key: one swatch per phase and per idle cause. */
export function legend(): HTMLDivElement {
  const swatch = (key: string) =>
    h(
      'span',
      { class: 'gpuprof-w-key' },
      h('span', { class: 'gpuprof-w-swatch', style: `background:${color(key)}` }),
      key
    );
  return h(
    'div',
    { class: 'gpuprof-w-legend' },
    'phases: ',
    ...PHASE_KEYS.map(swatch),
    ' · idle gaps: ',
    ...GAP_CAUSES.map(swatch)
  );
}

/** The time axis under the lanes at `y`: a tick and its label at each `x` (px). */
export function tickMarks(marks: { x: number; label: string }[], y: number): SVGElement[] {
  const out: SVGElement[] = [];
  for (const m of marks) {
    out.push(
      s('line', { x1: m.x, x2: m.x, y1: y, y2: y + 4, class: 'gpuprof-w-tick' }),
      s('text', { x: m.x, y: y + 15, 'text-anchor': 'middle', class: 'gpuprof-w-axis' }, m.label)
    );
  }
  return out;
}

/** The arrow head the flow arrows end with (an SVG `<defs>` holding marker `id`). */
export function arrowMarker(id: string): SVGDefsElement {
  const defs = s('defs');
  const marker = s('marker', {
    id,
    viewBox: '0 0 8 8',
    refX: 7,
    refY: 4,
    markerWidth: 7,
    markerHeight: 7,
    orient: 'auto'
  });
  marker.append(s('path', { d: 'M0,0 L8,4 L0,8 Z', class: 'gpuprof-w-flowhead' }));
  defs.append(marker);
  return defs;
}

/** A CPU→GPU flow arrow from the launch (x1, y1) to the GPU event's start (x2, y2), in px. */
export function flowArrow([x1, y1, x2, y2]: number[], markerId: string): SVGPathElement {
  const bend = Math.max(Math.abs(y2 - y1) / 2, 12);
  return s('path', {
    d: `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`,
    class: 'gpuprof-w-flow',
    'marker-end': `url(#${markerId})`
  });
}

/**
 * The flow arrows of events `ends` ([lane, index in its events], null skipped) that carry a
 * host launch; `x` maps a time to px, `laneMid` a lane to the y of its middle.
 */
export function flowArrows(
  events: ILaneEvents[],
  ends: (readonly [number, number] | null)[],
  x: (t: number) => number,
  laneMid: (lane: number) => number,
  markerId: string
): SVGPathElement[] {
  const out: SVGPathElement[] = [];
  const seen = new Set<string>(); // the pinned event hovered: one arrow
  for (const e of ends) {
    const link = e && e[1] >= 0 ? events[e[0]].link?.[e[1]] : null;
    if (e && link && link.launchAt !== null && link.launchLane >= 0 && !seen.has(`${e}`)) {
      seen.add(`${e}`);
      const at = [
        x(link.launchAt),
        laneMid(link.launchLane),
        x(events[e[0]].start[e[1]]),
        laneMid(e[0])
      ];
      out.push(flowArrow(at, markerId));
    }
  }
  return out;
}
