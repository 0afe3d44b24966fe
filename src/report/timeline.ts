/**
 * The "GPU timeline" panel's interaction: the view window (Ctrl/⌘+wheel, W/A/S/D, box drag and
 * step clicks move it; the page keeps the plain wheel), hover tips and CPU→GPU arrows, the pinned
 * event and the search. Each change redraws the frame (timelineDrawing.ts: aggregated at full
 * view, one named rectangle per kernel once zoomed in).
 */
import { boxView, IView, keyMove, zoom } from './axis';
import { h, s } from './dom';
import { IReportEnv } from './env';
import { eventRows, hoverText, nthHit, searchHits, stepNumber, tipPosition } from './eventinfo';
import { IRect, laneEvents } from './lod';
import { StepLoader } from './stepLoader';
import { ITimeline } from './summary';
import { BAND, drawFrame, LANE, LEFT, stepAt, timelineHeight, xOf } from './timelineDrawing';
import { flowArrows, HINT, legend, pinPanel, searchBox } from './timelineTools';

/** Event the report sends a timeline to zoom to its step `detail.index` and focus it. */
export const SHOW_STEP_EVENT = 'gpuprof-show-step';

export { alignedLabel, laneRank, rectTip, scaleLabel, stepNumber, stepTip } from './eventinfo';

/** The interactive timeline of `tl`; `env.loadStep` fills in steps the summary does not inline. */
export function drawTimeline(tl: ITimeline, env: IReportEnv = {}): HTMLDivElement {
  const wrap = h('div', { class: 'gpuprof-w-timeline' });
  let width = 900; // follows the output's width (ResizeObserver below), so labels keep their size
  const lanesH = LANE * tl.lanes.length;
  const height = timelineHeight(tl);
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
  const gapStarts = tl.gaps.start.slice().sort((a, b) => a - b);
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
    flows.replaceChildren(
      ...flowArrows(events, [pin, hover], xOf(view, plotW), mid, `${clipId}-arrow`)
    );
  };
  const clipId = `gpuprof-clip-${Math.random().toString(36).slice(2)}`;
  let plotW = width - LEFT - 10;
  const hasEvents = (i: number) => loader.hasEvents(i);
  const maybeLoad = () => {
    const st = stepAt(steps, (view.v0 + view.v1) / 2);
    if (st) {
      loader.want(steps.indexOf(st), view.v1 - view.v0);
    }
  };
  const render = () => {
    drawn = drawFrame(svg, {
      tl,
      events,
      view,
      width,
      plotW,
      clipId,
      query,
      pinned,
      gapStarts,
      stepEvents: (i, st) =>
        hasEvents(i) ? 'all' : loader.isLoading(st.step) ? 'loading' : 'merged',
      flows
    });
    showFlows(null);
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
