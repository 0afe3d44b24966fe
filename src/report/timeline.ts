/**
 * The "GPU timeline" panel: the real events of the profiled steps, aggregated at full view and
 * one named rectangle per kernel once zoomed in (lod.ts); steps, phases and idle gaps drawn; the
 * page keeps the plain wheel (Ctrl/⌘+wheel, W/A/S/D, box drag and step clicks move the view).
 */
import { COUNTER_H, counterTracks } from './counters';
import { boxView, IView, keyMove, ticks, zoom } from './axis';
import { color } from './colors';
import { h, s } from './dom';
import { IReportEnv } from './env';
import {
  alignedLabel,
  eventRows,
  hoverText,
  laneRank,
  nthHit,
  rectClass,
  scaleLabel,
  searchHits,
  stepNumber,
  tipPosition
} from './eventinfo';
import { fit, IRect, laneEvents, lodRects, placeName } from './lod';
import { StepLoader } from './stepLoader';
import { ITimeline } from './summary';
import {
  arrowMarker,
  flowArrows,
  HINT,
  legend,
  pinPanel,
  searchBox,
  tickMarks
} from './timelineTools';

const LEFT = 170;
const LANE = 26;
const BAND = 20;
const AXIS = 34;

/** Event the report sends a timeline to zoom to its step `detail.index` and focus it. */
export const SHOW_STEP_EVENT = 'gpuprof-show-step';

export { alignedLabel, laneRank, rectTip, scaleLabel, stepNumber, stepTip } from './eventinfo';

/** The interactive timeline of `tl`; `env.loadStep` fills in steps the summary does not inline. */
export function drawTimeline(tl: ITimeline, env: IReportEnv = {}): HTMLDivElement {
  const wrap = h('div', { class: 'gpuprof-w-timeline' });
  let width = 900; // follows the output's width (ResizeObserver below), so labels keep their size
  const lanesH = LANE * tl.lanes.length;
  const countersH = COUNTER_H * (tl.counters ?? []).length; // under the lanes, above the axis
  const height = BAND + lanesH + countersH + AXIS;
  const svg = s('svg', {
    width: '100%',
    viewBox: `0 0 ${width} ${height}`,
    class: 'gpuprof-w-tl',
    tabindex: 0,
    role: 'img',
    'data-chart': 'timeline',
    'aria-label': 'GPU timeline: W/S zoom, A/D pan, Ctrl or Cmd + wheel zooms'
  });
  const tip = h('div', { class: 'gpuprof-w-tip' });
  const info = h(
    'div',
    { class: 'gpuprof-w-hint' },
    `${tl.n_events.toLocaleString()} events · ${HINT}`
  );
  const steps = tl.steps;
  const gaps = tl.gaps;
  const gapStarts = gaps.start.slice().sort((a, b) => a - b);
  const loader = new StepLoader(tl, env.loadStep, fresh => {
    events = fresh ? laneEvents(tl, loader.loaded) : events;
    render();
  });
  let events = laneEvents(tl, loader.loaded);
  let view: IView = { v0: 0, v1: tl.dur_us };
  let drawn: IRect[][] = [];
  /** The event clicked to pin its details: its lane and start (kept across redraws). */
  let pinned: { lane: number; start: number } | null = null;
  let query = '';
  const pin = pinPanel(() => {
    pinned = null;
    render();
  });
  const flows = s('g', { class: 'gpuprof-w-flows' });
  /** CPU→GPU arrows: the pinned event's, and the hovered one's (`hover`: lane, event index). */
  const showFlows = (hover: [number, number] | null) => {
    const pin = pinned
      ? ([pinned.lane, events[pinned.lane].start.indexOf(pinned.start)] as const)
      : null;
    const mid = (li: number) => BAND + li * LANE + LANE / 2;
    flows.replaceChildren(...flowArrows(events, [pin, hover], x, mid, `${clipId}-arrow`));
  };
  const clipId = `gpuprof-clip-${Math.random().toString(36).slice(2)}`;
  let plotW = width - LEFT - 10;
  const x = (t: number) => LEFT + ((t - view.v0) / (view.v1 - view.v0)) * plotW;
  const hasEvents = (i: number) => loader.hasEvents(i);
  /** The step holding time `t`, or null. */
  const stepAt = (t: number) => steps.find(st => st.start <= t && t < st.end) ?? null;
  /** The step the axis counts from: the one the view starts in (else the one in its middle). */
  const origin = () => stepAt(view.v0 + 1e-6) ?? stepAt((view.v0 + view.v1) / 2);
  const maybeLoad = () => {
    const st = stepAt((view.v0 + view.v1) / 2);
    if (st) {
      loader.want(steps.indexOf(st), view.v1 - view.v0);
    }
  };
  const render = () => {
    const { v0, v1 } = view;
    const usPerPx = (v1 - v0) / plotW;
    // the window's width, for tests and tools that must know how far the view is zoomed
    svg.dataset.viewUs = (v1 - v0).toFixed(0);
    svg.replaceChildren();
    const clip = s('clipPath', { id: clipId });
    clip.append(s('rect', { x: LEFT, y: 0, width: plotW, height }));
    svg.append(clip, arrowMarker(`${clipId}-arrow`));
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
        band.dataset.events = hasEvents(i)
          ? 'all'
          : loader.isLoading(st.step)
            ? 'loading'
            : 'merged';
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
      const ev = events[li];
      const rects = lodRects(ev, v0, v1, usPerPx, gapStarts);
      rects.forEach((r, i) => {
        const px = Math.max(x(r.end) - x(r.start), 0.7);
        const fill = color(r.phase || lane.kind);
        const el = s('rect', {
          x: x(r.start),
          y: y + 3,
          width: px,
          height: LANE - 6,
          style: `fill:${fill}`,
          class: rectClass(ev, rects, i, query, pinned?.lane === li ? pinned.start : null)
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
    const counters = counterTracks(tl, x, BAND + lanesH, LEFT);
    plot.append(...counters.lines, flows);
    showFlows(null);
    svg.append(plot, ...counters.labels);
    const st = origin();
    // about one tick per 100 px, so labels never run together
    const marks = ticks(view, st ? st.start : 0, Math.max(2, Math.floor(plotW / 100)));
    svg.append(
      ...tickMarks(
        marks.map(tk => ({ x: x(tk.t), label: tk.label })),
        BAND + lanesH + countersH
      )
    );
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
    if (ev.key === 'Escape' && pinned) {
      pinned = null; // unpin
      pin.clear();
      return render();
    }
    const moved = ev.ctrlKey || ev.metaKey || ev.altKey ? null : keyMove(ev.key, view, tl.dur_us);
    if (moved) {
      ev.preventDefault();
      setView(moved);
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
    const data = (ev.target as SVGElement).dataset ?? {};
    if (data.lane !== undefined && data.i !== undefined) {
      pinEvent(Number(data.lane), drawn[Number(data.lane)][Number(data.i)]);
      return;
    }
    const step = data.step;
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
    const over = (ev.target as SVGElement).dataset ?? {};
    const r = over.lane !== undefined ? drawn[Number(over.lane)][Number(over.i)] : null;
    showFlows(r && r.count === 1 && r.first !== undefined ? [Number(over.lane), r.first] : null);
    const held: number[] = [];
    steps.forEach((x, k) => hasEvents(k) && held.push(stepNumber(x, k)));
    const text = hoverText(tl, drawn, (ev.target as SVGElement).dataset ?? {}, {
      loadable: Boolean(env.loadStep),
      hasEvents,
      held
    });
    if (!text) {
      tip.style.display = 'none';
      return;
    }
    tip.textContent = text;
    tip.style.display = 'block';
    // kept inside the panel: flipped left of (or above) the pointer near an edge
    const wb = wrap.getBoundingClientRect();
    const at = tipPosition(
      ev.clientX - wb.left,
      ev.clientY - wb.top,
      tip.offsetWidth,
      tip.offsetHeight,
      wrap.clientWidth,
      wrap.clientHeight
    );
    tip.style.left = `${at.left}px`;
    tip.style.top = `${at.top}px`;
  });
  svg.addEventListener('mouseleave', () => {
    tip.style.display = 'none';
    showFlows(null);
  });
  svg.addEventListener('dblclick', () => setView({ v0: 0, v1: tl.dur_us }));
  /** Pin rectangle `r` of lane `li`: its details below the chart, its outline drawn. */
  const pinEvent = (li: number, r: IRect) => {
    pinned = { lane: li, start: r.start };
    pin.show(eventRows(tl, events, li, r));
    render();
  };
  let nextHit = 0;
  const search = searchBox(
    q => {
      query = q;
      nextHit = 0;
      render();
      return searchHits(events, q).length;
    },
    () => {
      // Enter: zoom to the next match and pin it
      const hit = nthHit(events, query, nextHit++);
      if (hit) {
        setView(boxView(hit.from, hit.to, tl.dur_us));
        const r = drawn[hit.lane].find(d => d.start <= hit.start && hit.start <= d.end);
        if (r) {
          pinEvent(hit.lane, r);
        }
      }
    }
  );
  wrap.addEventListener(SHOW_STEP_EVENT, ev => {
    const st = steps[(ev as CustomEvent<{ index: number }>).detail.index];
    if (st) {
      setView(boxView(st.start, st.end, tl.dur_us));
      svg.focus();
    }
  });
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
  wrap.append(
    h('div', { class: 'gpuprof-w-tlbar' }, info, search),
    loader.status,
    svg,
    tip,
    legend(),
    pin.el
  );
  return wrap;
}
