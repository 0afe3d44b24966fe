/**
 * The timeline's drawing: one frame of the SVG for a view window (idle gaps, step bands, lanes
 * of level-of-detail rectangles with their names, counter tracks, ticks and the axis title).
 * Pure of interaction: timeline.ts keeps the view, the pin and the search, and redraws here.
 */
import { COUNTER_H, counterTracks } from './counters';
import { IView, ticks } from './axis';
import { color } from './colors';
import { s } from './dom';
import { alignedLabel, laneRank, rectClass, scaleLabel, stepNumber } from './eventinfo';
import { fit, ILaneEvents, IRect, lodRects, placeName } from './lod';
import { ITimeline } from './summary';
import { arrowMarker, tickMarks } from './timelineTools';

/** One step of the timeline (its band, its start and end in µs). */
type ITimelineStep = ITimeline['steps'][number];

/** Width (px) of the lane labels left of the plot. */
export const LEFT = 170;
/** Height (px) of one lane. */
export const LANE = 26;
/** Height (px) of the step band above the lanes. */
export const BAND = 20;
/** Height (px) of the time axis under the lanes and counters. */
export const AXIS = 34;

/** Height (px) of the whole timeline of `tl`: step band, lanes, counter tracks, axis. */
export function timelineHeight(tl: ITimeline): number {
  return BAND + LANE * tl.lanes.length + COUNTER_H * (tl.counters ?? []).length + AXIS;
}

/** The x (px) of time `t` (µs) with window `view` drawn `plotW` px wide right of the labels. */
export function xOf(view: IView, plotW: number): (t: number) => number {
  return t => LEFT + ((t - view.v0) / (view.v1 - view.v0)) * plotW;
}

/** The step of `steps` holding time `t`, or null. */
export function stepAt(steps: readonly ITimelineStep[], t: number): ITimelineStep | null {
  return steps.find(st => st.start <= t && t < st.end) ?? null;
}

/** What one frame draws: the window, its size, and what the interaction marks in it. */
export interface IFrame {
  tl: ITimeline;
  events: ILaneEvents[];
  view: IView;
  width: number;
  plotW: number;
  /** Id of the plot's clip path (its arrow marker is `<clipId>-arrow`). */
  clipId: string;
  /** The search text: matching events are outlined. */
  query: string;
  /** The pinned event (its lane and start), outlined. */
  pinned: { lane: number; start: number } | null;
  /** Gap starts, ascending (idle gaps split merged rectangles). */
  gapStarts: number[];
  /** Whether step `i` holds every event, is loading them, or only the merged rectangles. */
  stepEvents(i: number, st: ITimelineStep): 'all' | 'loading' | 'merged';
  /** The group the CPU→GPU arrows go in (kept by the caller, drawn over the lanes). */
  flows: SVGGElement;
}

/** Idle gaps inside the window, shaded by cause. */
function drawGaps(plot: SVGGElement, f: IFrame, x: (t: number) => number): void {
  const { gaps } = f.tl;
  const lanesH = LANE * f.tl.lanes.length;
  gaps.start.forEach((st, i) => {
    const d = gaps.dur[i];
    if (st + d >= f.view.v0 && st <= f.view.v1) {
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
}

/** Step bands (clickable, labelled when they fit) and the lines where steps start. */
function drawSteps(plot: SVGGElement, f: IFrame, x: (t: number) => number): void {
  const lanesH = LANE * f.tl.lanes.length;
  f.tl.steps.forEach((st, i) => {
    if (st.end >= f.view.v0 && st.start <= f.view.v1) {
      const band = s('rect', {
        x: x(st.start),
        y: 1,
        width: Math.max(x(st.end) - x(st.start) - 1, 1),
        height: BAND - 3,
        class: 'gpuprof-w-step'
      });
      band.dataset.step = String(i);
      // 'all': zooming in here reaches single kernels; 'merged': only the bounded rectangles
      band.dataset.events = f.stepEvents(i, st);
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
}

/** Each lane's label and rectangles (with names where they fit); the rectangles drawn. */
function drawLanes(
  svg: SVGSVGElement,
  plot: SVGGElement,
  f: IFrame,
  x: (t: number) => number
): IRect[][] {
  const { tl, view, pinned } = f;
  const usPerPx = (view.v1 - view.v0) / f.plotW;
  return tl.lanes.map((lane, li) => {
    const y = BAND + li * LANE;
    svg.append(s('text', { x: 4, y: y + 17, class: 'gpuprof-w-lane' }, fit(lane.label, LEFT - 4)));
    const rank = laneRank(lane.id);
    if (li > 0 && rank !== null && rank !== laneRank(tl.lanes[li - 1].id)) {
      // a multi-rank timeline: a rule between one rank's lanes and the next rank's
      svg.append(s('line', { x1: 0, x2: f.width, y1: y, y2: y, class: 'gpuprof-w-rankline' }));
    }
    const ev = f.events[li];
    const rects = lodRects(ev, view.v0, view.v1, usPerPx, f.gapStarts);
    rects.forEach((r, i) => {
      const px = Math.max(x(r.end) - x(r.start), 0.7);
      const el = s('rect', {
        x: x(r.start),
        y: y + 3,
        width: px,
        height: LANE - 6,
        style: `fill:${color(r.phase || lane.kind)}`,
        class: rectClass(ev, rects, i, f.query, pinned?.lane === li ? pinned.start : null)
      });
      el.dataset.lane = String(li);
      el.dataset.i = String(i);
      plot.append(el);
      const next = i + 1 < rects.length ? x(rects[i + 1].start) : LEFT + f.plotW;
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
}

/** Ticks counted from the step the view starts in (about one per 100 px) and the axis title. */
function drawAxis(svg: SVGSVGElement, f: IFrame, x: (t: number) => number): void {
  const { tl, view } = f;
  const steps = tl.steps;
  const lanesH = LANE * tl.lanes.length;
  const countersH = COUNTER_H * (tl.counters ?? []).length;
  const st = stepAt(steps, view.v0 + 1e-6) ?? stepAt(steps, (view.v0 + view.v1) / 2);
  // about one tick per 100 px, so labels never run together
  const marks = ticks(view, st ? st.start : 0, Math.max(2, Math.floor(f.plotW / 100)));
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
      { x: LEFT, y: timelineHeight(tl) - 4, class: 'gpuprof-w-axis gpuprof-w-axis-title' },
      `${scaleLabel(tl.profiled_scale)}, ${from}${alignedLabel(tl.ranks_aligned_by)}`
    )
  );
}

/** Redraw `svg` as frame `f`; the rectangles drawn in each lane (for hover and pin lookups). */
export function drawFrame(svg: SVGSVGElement, f: IFrame): IRect[][] {
  const x = xOf(f.view, f.plotW);
  // the window's width, for tests and tools that must know how far the view is zoomed
  svg.dataset.viewUs = (f.view.v1 - f.view.v0).toFixed(0);
  svg.replaceChildren();
  const clip = s('clipPath', { id: f.clipId });
  clip.append(s('rect', { x: LEFT, y: 0, width: f.plotW, height: timelineHeight(f.tl) }));
  svg.append(clip, arrowMarker(`${f.clipId}-arrow`));
  const plot = s('g', { 'clip-path': `url(#${f.clipId})` });
  drawGaps(plot, f, x);
  drawSteps(plot, f, x);
  const drawn = drawLanes(svg, plot, f, x);
  const counters = counterTracks(f.tl, x, BAND + LANE * f.tl.lanes.length, LEFT);
  plot.append(...counters.lines, f.flows);
  svg.append(plot, ...counters.labels);
  drawAxis(svg, f, x);
  return drawn;
}
