/**
 * The "GPU timeline" panel: the real events of the profiled steps, aggregated at full view and
 * one named rectangle per kernel once zoomed in (lod.ts); steps, phases and idle gaps drawn; the
 * page keeps the plain wheel (Ctrl/⌘+wheel, W/A/S/D, box drag and step clicks move the view).
 */
import { GAP_CAUSES } from '../generated/palette';
import { boxView, IView, pan, ticks, zoom } from './axis';
import { color } from './colors';
import { h, ms, s, us } from './dom';
import { IReportEnv } from './env';
import { fit, IRect, laneEvents, lodRects, placeName } from './lod';
import { IStepDetail, ITimeline } from './summary';

const LEFT = 170;
const LANE = 26;
const BAND = 20;
const AXIS = 34;
const PHASE_KEYS = ['forward', 'backward', 'optimizer', 'data'];
const CAUSE_KEYS = GAP_CAUSES;

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

/** The interactive timeline of `tl`; `env.loadStep` fills in steps the summary does not inline. */
export function drawTimeline(tl: ITimeline, env: IReportEnv = {}): HTMLDivElement {
  const wrap = h('div', { class: 'gpuprof-w-timeline' });
  let width = 900; // follows the output's width (ResizeObserver below), so labels keep their size
  const lanesH = LANE * tl.lanes.length;
  const height = BAND + lanesH + AXIS;
  const svg = s('svg', {
    width: '100%',
    viewBox: `0 0 ${width} ${height}`,
    class: 'gpuprof-w-tl',
    tabindex: 0,
    role: 'img',
    'aria-label': 'GPU timeline: W/S zoom, A/D pan, Ctrl or Cmd + wheel zooms'
  });
  const tip = h('div', { class: 'gpuprof-w-tip' });
  const info = h(
    'div',
    { class: 'gpuprof-w-hint' },
    `${tl.n_events.toLocaleString()} events · Ctrl/⌘+wheel or W/S: zoom · A/D: pan · drag: box zoom · click a step: zoom to it · double-click: reset`
  );
  const steps = tl.steps;
  const gaps = tl.gaps;
  const gapStarts = gaps.start.slice().sort((a, b) => a - b);
  const loaded = new Map<number, IStepDetail & { strings: string[] }>();
  const loading = new Set<number>();
  let events = laneEvents(tl, loaded);
  let view: IView = { v0: 0, v1: tl.dur_us };
  let drawn: IRect[][] = [];
  const clipId = `gpuprof-clip-${Math.random().toString(36).slice(2)}`;
  let plotW = width - LEFT - 10;
  const x = (t: number) => LEFT + ((t - view.v0) / (view.v1 - view.v0)) * plotW;
  /** Whether every event of step `i` is at hand (inlined in the summary or loaded). */
  const hasEvents = (i: number) => Boolean(tl.detail[i]) || loaded.has(steps[i].step);
  /** The step holding time `t`, or null. */
  const stepAt = (t: number) => steps.find(st => st.start <= t && t < st.end) ?? null;
  /** The step the axis counts from: the one the view starts in (else the one in its middle). */
  const origin = () => stepAt(view.v0 + 1e-6) ?? stepAt((view.v0 + view.v1) / 2);
  const maybeLoad = () => {
    const st = stepAt((view.v0 + view.v1) / 2);
    const i = st ? steps.indexOf(st) : -1;
    if (!st || !env.loadStep || tl.detail[i] || loaded.has(st.step) || loading.has(st.step)) {
      return;
    }
    if (view.v1 - view.v0 > 1.5 * (st.end - st.start)) {
      return;
    }
    loading.add(st.step);
    env.loadStep(st.step).then(
      answer => {
        loaded.set(st.step, { ...answer.detail, strings: answer.strings });
        events = laneEvents(tl, loaded);
        render();
      },
      () => undefined // the bounded lanes stay drawn
    );
  };
  const render = () => {
    const { v0, v1 } = view;
    const usPerPx = (v1 - v0) / plotW;
    // the window's width, for tests and tools that must know how far the view is zoomed
    svg.dataset.viewUs = (v1 - v0).toFixed(0);
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
          y: BAND,
          width: Math.max(x(st + d) - x(st), 0.5),
          height: lanesH,
          style: `fill:${color(gaps.cause[i])}`,
          'fill-opacity': 0.18,
          class: 'gpuprof-w-gap'
        });
        r.dataset.gap = String(i);
        plot.append(r);
      }
    });
    steps.forEach((st, i) => {
      if (st.end >= v0 && st.start <= v1) {
        const band = s('rect', {
          x: x(st.start),
          y: 1,
          width: Math.max(x(st.end) - x(st.start) - 1, 1),
          height: BAND - 3,
          class: 'gpuprof-w-step'
        });
        band.dataset.step = String(i);
        // 'all': zooming in here reaches single kernels; 'merged': only the bounded rectangles
        band.dataset.events = hasEvents(i) ? 'all' : 'merged';
        const bw = x(st.end) - x(st.start);
        plot.append(
          band,
          s('line', {
            x1: x(st.start),
            x2: x(st.start),
            y1: 0,
            y2: BAND + lanesH,
            class: 'gpuprof-w-stepline'
          })
        );
        const label = fit(`step ${stepNumber(st, i)}`, bw);
        if (label) {
          const t = s(
            'text',
            { x: Math.max(x(st.start), LEFT) + 4, y: 14, class: 'gpuprof-w-steplabel' },
            label
          );
          t.dataset.step = String(i);
          plot.append(t);
        }
      }
    });
    drawn = tl.lanes.map((lane, li) => {
      const y = BAND + li * LANE;
      svg.append(
        s('text', { x: 4, y: y + 17, class: 'gpuprof-w-lane' }, fit(lane.label, LEFT - 4))
      );
      const rank = laneRank(lane.id);
      if (li > 0 && rank !== null && rank !== laneRank(tl.lanes[li - 1].id)) {
        // a multi-rank timeline: a rule between one rank's lanes and the next rank's
        svg.append(s('line', { x1: 0, x2: width, y1: y, y2: y, class: 'gpuprof-w-rankline' }));
      }
      const rects = lodRects(events[li], v0, v1, usPerPx, gapStarts);
      rects.forEach((r, i) => {
        const px = Math.max(x(r.end) - x(r.start), 0.7);
        const fill = color(r.phase || lane.kind);
        const el = s('rect', {
          x: x(r.start),
          y: y + 3,
          width: px,
          height: LANE - 6,
          style: `fill:${fill}`
        });
        el.dataset.lane = String(li);
        el.dataset.i = String(i);
        plot.append(el);
        const next = i + 1 < rects.length ? x(rects[i + 1].start) : LEFT + plotW;
        const name = placeName(r, Math.max(x(r.start), LEFT), x(r.start) + px, next);
        if (name) {
          const cls = name.inside ? 'gpuprof-w-name' : 'gpuprof-w-name gpuprof-w-name-out';
          const t = s('text', { x: name.x, y: y + 17, class: cls }, name.text);
          t.dataset.lane = String(li);
          t.dataset.i = String(i);
          plot.append(t);
        }
      });
      return rects;
    });
    svg.append(plot);
    const st = origin();
    // about one tick per 100 px, so labels such as "40200 µs" never run together
    for (const tk of ticks(view, st ? st.start : 0, Math.max(2, Math.floor(plotW / 100)))) {
      svg.append(
        s('line', {
          x1: x(tk.t),
          x2: x(tk.t),
          y1: BAND + lanesH,
          y2: BAND + lanesH + 4,
          class: 'gpuprof-w-tick'
        })
      );
      svg.append(
        s(
          'text',
          { x: x(tk.t), y: BAND + lanesH + 15, 'text-anchor': 'middle', class: 'gpuprof-w-axis' },
          tk.label
        )
      );
    }
    const from = st
      ? `from the start of step ${stepNumber(st, steps.indexOf(st))}`
      : 'from the window start';
    svg.append(
      s(
        'text',
        { x: LEFT, y: height - 4, class: 'gpuprof-w-axis gpuprof-w-axis-title' },
        `${scaleLabel(tl.profiled_scale)}, ${from}${alignedLabel(tl.ranks_aligned_by)}`
      )
    );
    maybeLoad();
  };
  const timeAt = (clientX: number) => {
    const box = svg.getBoundingClientRect();
    const px = ((clientX - box.left) / box.width) * width;
    return view.v0 + ((px - LEFT) / plotW) * (view.v1 - view.v0);
  };
  const setView = (v: IView) => {
    view = v;
    render();
  };
  svg.addEventListener(
    'wheel',
    ev => {
      if (!(ev.ctrlKey || ev.metaKey)) {
        return; // the page scrolls
      }
      ev.preventDefault();
      setView(zoom(view, timeAt(ev.clientX), ev.deltaY > 0 ? 1.25 : 0.8, tl.dur_us));
    },
    { passive: false }
  );
  svg.addEventListener('keydown', ev => {
    const mid = (view.v0 + view.v1) / 2;
    const w = view.v1 - view.v0;
    const moves: Record<string, () => IView> = {
      w: () => zoom(view, mid, 0.6, tl.dur_us),
      s: () => zoom(view, mid, 1 / 0.6, tl.dur_us),
      a: () => pan(view, 0.2 * w, tl.dur_us),
      d: () => pan(view, -0.2 * w, tl.dur_us)
    };
    const move = moves[ev.key.toLowerCase()];
    if (move && !ev.ctrlKey && !ev.metaKey && !ev.altKey) {
      ev.preventDefault();
      setView(move());
    }
  });
  let drag: { x: number; sel: SVGRectElement } | null = null;
  const svgX = (clientX: number) => {
    const box = svg.getBoundingClientRect();
    return ((clientX - box.left) / box.width) * width;
  };
  svg.addEventListener('mousedown', ev => {
    const sel = s('rect', {
      x: svgX(ev.clientX),
      y: 0,
      width: 0,
      height: BAND + lanesH,
      class: 'gpuprof-w-sel'
    });
    drag = { x: ev.clientX, sel };
  });
  svg.addEventListener('mouseup', ev => {
    if (!drag) {
      return;
    }
    const moved = Math.abs(ev.clientX - drag.x);
    const start = drag.x;
    drag.sel.remove();
    drag = null;
    if (moved >= 5) {
      setView(boxView(timeAt(start), timeAt(ev.clientX), tl.dur_us));
      return;
    }
    const step = (ev.target as SVGElement).dataset?.step;
    if (step !== undefined) {
      const st = steps[Number(step)];
      setView(boxView(st.start, st.end, tl.dur_us));
    }
  });
  svg.addEventListener('mousemove', ev => {
    if (drag) {
      const a = svgX(drag.x);
      const b = svgX(ev.clientX);
      drag.sel.setAttribute('x', String(Math.min(a, b)));
      drag.sel.setAttribute('width', String(Math.abs(b - a)));
      if (!drag.sel.isConnected) {
        svg.append(drag.sel);
      }
      return;
    }
    const target = ev.target as SVGElement;
    const data = target.dataset ?? {};
    if (data.lane !== undefined) {
      tip.textContent = `${tl.lanes[Number(data.lane)].label}\n${rectTip(drawn[Number(data.lane)][Number(data.i)])}`;
    } else if (data.gap !== undefined) {
      const i = Number(data.gap);
      tip.textContent = `GPU idle ${us(gaps.dur[i])}: ${gaps.cause[i]}`;
    } else if (data.step !== undefined) {
      const i = Number(data.step);
      const st = steps[i];
      const held = steps.filter((_, k) => hasEvents(k)).map((x, k) => stepNumber(x, k));
      // without a server, a step the summary does not carry stays merged however far one zooms
      const where =
        hasEvents(i) || env.loadStep
          ? ''
          : held.length
            ? ` · events merged: every kernel is in step ${held.join(', ')}`
            : ' · events merged';
      tip.textContent = `${stepTip(st, i, tl.profiled_scale)} · click to zoom${where}`;
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
  svg.addEventListener('dblclick', () => setView({ v0: 0, v1: tl.dur_us }));
  const swatch = (key: string) =>
    h(
      'span',
      { class: 'gpuprof-w-key' },
      h('span', { class: 'gpuprof-w-swatch', style: `background:${color(key)}` }),
      key
    );
  const legend = h(
    'div',
    { class: 'gpuprof-w-legend' },
    'phases: ',
    ...PHASE_KEYS.map(swatch),
    ' · idle gaps: ',
    ...CAUSE_KEYS.map(swatch)
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
