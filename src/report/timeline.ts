/**
 * The "GPU timeline" panel: GPU busy figures, the zoomable timeline and the kernel-kind chart.
 * The timeline is the summary's bounded level-of-detail lanes, drawn as SVG rectangles.
 */
import { CAUSE_COLORS, LANE_COLORS } from './colors';
import { empty, h, num, s, trustedChart, us } from './dom';
import { ICharts, IReportSummary, ITimeline } from './summary';

const LEFT = 170;
const LANE = 22;
const TOP = 18;
/** Never zoom below one microsecond. */
const MIN_SPAN_US = 1;

/** A visible time range [v0, v1] in µs from the window start. */
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

/** The hover text of rectangle `i` of lane `li`: name, op, shapes, duration. */
export function rectTip(tl: ITimeline, li: number, i: number): string {
  const lane = tl.lanes[li];
  const lines = [tl.names[lane.name[i]]];
  if (lane.op && tl.names[lane.op[i]]) {
    lines.push(`op: ${tl.names[lane.op[i]]}`);
  }
  const shape = lane.shape ? tl.names[lane.shape[i]] : '';
  if (shape && shape !== '[]') {
    lines.push(`shapes: ${shape}`);
  }
  const merged = lane.count[i] > 1 ? ` (${lane.count[i]} events merged)` : '';
  lines.push(`${us(lane.dur[i])}${merged}`);
  return lines.join('\n');
}

/** The interactive timeline: wheel zooms, drag pans, double-click resets, hover explains. */
export function drawTimeline(tl: ITimeline): HTMLDivElement {
  const wrap = h('div', { class: 'gpuprof-w-timeline' });
  let width = 900; // follows the output's width (ResizeObserver below), so labels keep their size
  const height = TOP + LANE * tl.lanes.length + 24;
  const svg = s('svg', { width: '100%', viewBox: `0 0 ${width} ${height}`, class: 'gpuprof-w-tl' });
  const tip = h('div', { class: 'gpuprof-w-tip' });
  const info = h(
    'div',
    { class: 'gpuprof-w-hint' },
    `${tl.n_events.toLocaleString()} events as ${tl.n_rects.toLocaleString()} rectangles · wheel: zoom · drag: pan · double-click: reset`
  );
  const gaps = tl.gaps ?? { start: [], dur: [], cause: [] };
  let view: IView = { v0: 0, v1: tl.dur_us };
  const clipId = `gpuprof-clip-${Math.random().toString(36).slice(2)}`;
  let plotW = width - LEFT - 10;
  const x = (t: number) => LEFT + ((t - view.v0) / (view.v1 - view.v0)) * plotW;
  const render = () => {
    const { v0, v1 } = view;
    svg.replaceChildren();
    const clip = s('clipPath', { id: clipId });
    clip.append(s('rect', { x: LEFT, y: 0, width: plotW, height }));
    svg.append(clip);
    const plot = s('g', { 'clip-path': `url(#${clipId})` });
    gaps.start.forEach((st, i) => {
      const d = gaps.dur[i];
      if (st + d >= v0 && st <= v1) {
        const r = s('rect', {
          x: x(st),
          y: TOP,
          width: Math.max(x(st + d) - x(st), 0.5),
          height: LANE * tl.lanes.length,
          fill: CAUSE_COLORS[gaps.cause[i]] || '#999',
          'fill-opacity': 0.2,
          class: 'gpuprof-w-gap'
        });
        r.dataset.gap = String(i);
        plot.append(r);
      }
    });
    tl.lanes.forEach((lane, li) => {
      const y = TOP + li * LANE;
      svg.append(s('text', { x: 4, y: y + 15, class: 'gpuprof-w-lane' }, lane.label));
      const fill = LANE_COLORS[lane.kind] || '#555';
      for (let i = 0; i < lane.start.length; i++) {
        const a = lane.start[i];
        const b = a + lane.dur[i];
        if (b >= v0 && a <= v1) {
          const r = s('rect', {
            x: x(a),
            y: y + 3,
            width: Math.max(x(b) - x(a), 0.7),
            height: LANE - 6,
            fill
          });
          r.dataset.lane = String(li);
          r.dataset.i = String(i);
          plot.append(r);
        }
      }
    });
    svg.append(plot);
    const span = (v1 - v0) / 1000;
    for (let k = 0; k <= 5; k++) {
      const anchor = k === 0 ? 'start' : k === 5 ? 'end' : 'middle';
      const label = `${(v0 / 1000 + (k * span) / 5).toPrecision(4)} ms`;
      svg.append(
        s(
          'text',
          {
            x: LEFT + (k * plotW) / 5,
            y: height - 6,
            'text-anchor': anchor,
            class: 'gpuprof-w-axis'
          },
          label
        )
      );
    }
  };
  const timeAt = (clientX: number) => {
    const box = svg.getBoundingClientRect();
    const px = ((clientX - box.left) / box.width) * width;
    return view.v0 + ((px - LEFT) / plotW) * (view.v1 - view.v0);
  };
  svg.addEventListener(
    'wheel',
    ev => {
      ev.preventDefault();
      view = zoom(view, timeAt(ev.clientX), ev.deltaY > 0 ? 1.25 : 0.8, tl.dur_us);
      render();
    },
    { passive: false }
  );
  let drag: { x: number; from: IView } | null = null;
  svg.addEventListener('mousedown', ev => {
    drag = { x: ev.clientX, from: view };
  });
  window.addEventListener('mouseup', () => {
    drag = null;
  });
  svg.addEventListener('mousemove', ev => {
    if (drag) {
      const box = svg.getBoundingClientRect();
      const dt =
        ((((ev.clientX - drag.x) / box.width) * width) / plotW) * (drag.from.v1 - drag.from.v0);
      view = pan(drag.from, dt, tl.dur_us);
      render();
      return;
    }
    const target = ev.target as SVGElement;
    if (target.dataset?.lane !== undefined) {
      tip.textContent = rectTip(tl, Number(target.dataset.lane), Number(target.dataset.i));
    } else if (target.dataset?.gap !== undefined) {
      const i = Number(target.dataset.gap);
      tip.textContent = `GPU idle ${us(gaps.dur[i])}: ${gaps.cause[i]}`;
    } else {
      tip.style.display = 'none';
      return;
    }
    tip.style.display = 'block';
    const wb = wrap.getBoundingClientRect();
    tip.style.left = `${ev.clientX - wb.left + 12}px`;
    tip.style.top = `${ev.clientY - wb.top + 12}px`;
  });
  svg.addEventListener('mouseleave', () => {
    tip.style.display = 'none';
  });
  svg.addEventListener('dblclick', () => {
    view = { v0: 0, v1: tl.dur_us };
    render();
  });
  const legend = h(
    'div',
    { class: 'gpuprof-w-legend' },
    'idle gaps: ',
    ...Object.entries(CAUSE_COLORS).map(([k, c]) => h('span', { style: `color:${c}` }, `■ ${k} `))
  );
  render();
  if (typeof ResizeObserver !== 'undefined') {
    new ResizeObserver(() => {
      const w = Math.round(wrap.clientWidth);
      if (w < 300 || Math.abs(w - width) < 4) {
        return; // hidden tab, or no real change
      }
      width = w;
      plotW = width - LEFT - 10;
      svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
      render();
    }).observe(wrap);
  }
  wrap.append(info, svg, tip, legend);
  return wrap;
}

/** GPU busy line, idle causes, the timeline (or why there is none), kernel-kind chart. */
export function timelinePanel(sm: IReportSummary, charts: ICharts): HTMLDivElement {
  const tl = sm.timeline;
  const gpu = sm.gpu ?? {};
  const box = h('div');
  if (gpu.available) {
    const causes = Object.entries(gpu.idle_by_cause_ms ?? {})
      .filter(([, v]) => v >= 0.005)
      .map(([k, v]) => `${k} ${v.toFixed(2)} ms`)
      .join(', ');
    const tail = causes ? `; idle per real step by cause: ${causes}.` : '.';
    box.append(
      h(
        'p',
        {},
        `GPU busy ${num(gpu.busy_pct, 1)}% of the profiled window; ${num(gpu.busy_ms_per_step, 2)} ms busy per step${tail}`
      )
    );
  }
  if (!tl || !(tl.lanes ?? []).length) {
    const multi = (sm.ranks ?? []).length > 1 ? " (multi-rank runs: open one rank's trace)." : '.';
    box.append(empty(`No timeline: the trace holds no events in the profiled window${multi}`));
  } else {
    box.append(drawTimeline(tl));
  }
  if (charts.kinds) {
    box.append(h('h4', {}, 'GPU time by kernel kind'), trustedChart(charts.kinds));
  }
  return box;
}
