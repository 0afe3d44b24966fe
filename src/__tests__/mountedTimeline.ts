/**
 * A timeline mounted in the test document with its pointer, wheel and key helpers, for the
 * timeline specs (timeline.spec.ts: drawing and navigation; timelineTools.spec.ts: the tools).
 */
import { IReportEnv } from '../report/env';
import { ITimeline } from '../report/summary';
import { drawTimeline } from '../report/timeline';
import { bigTimeline } from './bigTimeline';

/** The timeline in the document, its SVG laid out 900 px wide from x=0 (plot from x=170, 720 px). */
export function mounted(tl: ITimeline = bigTimeline(), env: IReportEnv = {}) {
  const wrap = drawTimeline(tl, env);
  document.body.append(wrap);
  const svg = wrap.querySelector('svg.gpuprof-w-tl') as SVGSVGElement;
  svg.getBoundingClientRect = () => ({ left: 0, top: 0, width: 900, height: 100 }) as DOMRect;
  const axis = () => Array.from(svg.querySelectorAll('.gpuprof-w-axis')).map(t => t.textContent);
  const names = () => Array.from(svg.querySelectorAll('.gpuprof-w-name')).map(t => t.textContent);
  const rects = (lane: number) => svg.querySelectorAll(`rect[data-lane="${lane}"]`).length;
  const mouse = (type: string, init: MouseEventInit, target: Element = svg) =>
    target.dispatchEvent(new MouseEvent(type, { bubbles: true, ...init }));
  const wheel = (init: WheelEventInit) => {
    const ev = new WheelEvent('wheel', { bubbles: true, cancelable: true, ...init });
    svg.dispatchEvent(ev);
    return ev.defaultPrevented;
  };
  const key = (k: string) =>
    svg.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
  /** Drag from svg x `a` to `b` (client x equals svg x here). */
  const drag = (a: number, b: number) => {
    mouse('mousedown', { clientX: a });
    mouse('mousemove', { clientX: b });
    mouse('mouseup', { clientX: b });
  };
  return { wrap, svg, axis, names, rects, wheel, key, drag, mouse };
}
