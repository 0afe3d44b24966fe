/**
 * The step-time chart: warm-up, baseline and profiled steps in side-by-side panels, each on its
 * own scale so the slower profiled steps never squash the baseline's spread. Drawn to the
 * output's width, text in the theme's colours.
 */
import { h, ms, s } from './dom';
import { ISteps } from './summary';

const HEIGHT = 170;
const TOP = 22;
const BOTTOM = 22;
const PAD = 56;

/** One series of the chart; `median` is the summary's (over every step, not only those drawn). */
interface ISeries {
  key: string;
  title: string;
  values: number[];
  median: number | null;
}

/** The non-empty series of `st`, in run order. */
export function stepSeries(st: ISteps): ISeries[] {
  const all: ISeries[] = [
    { key: 'warmup', title: 'warm-up', values: st.warmup_ms, median: null },
    { key: 'baseline', title: 'baseline', values: st.baseline_ms, median: st.baseline.median_ms },
    { key: 'profiled', title: 'profiled', values: st.profiled_ms, median: st.profiled.median_ms }
  ];
  return all.filter(x => x.values.length);
}

/** A panel's value range, padded so a flat series still has height. */
export function seriesRange(values: number[]): [number, number] {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const pad = Math.max((hi - lo) * 0.1, hi * 0.01, 1e-3);
  return [lo - pad, hi + pad];
}

/** Draw the chart into an SVG of `width` px. */
function draw(svg: SVGSVGElement, series: ISeries[], width: number): void {
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${width} ${HEIGHT}`);
  const weight = (x: ISeries) => Math.max(x.values.length, 12);
  const total = series.reduce((n, x) => n + weight(x), 0);
  const room = width - PAD * series.length;
  let left = 0;
  for (const x of series) {
    const w = (room * weight(x)) / total;
    const x0 = left + PAD;
    const [lo, hi] = seriesRange(x.values);
    const y = (v: number) => TOP + (1 - (v - lo) / (hi - lo)) * (HEIGHT - TOP - BOTTOM);
    const g = s('g', { class: `gpuprof-w-series gpuprof-w-series-${x.key}` });
    g.append(
      s(
        'text',
        { x: x0, y: 12, class: 'gpuprof-w-axis gpuprof-w-series-title' },
        `${x.title} (n=${x.values.length})`
      ),
      s('line', { x1: x0, x2: x0, y1: TOP, y2: HEIGHT - BOTTOM, class: 'gpuprof-w-tick' }),
      s(
        'text',
        {
          x: x0 - 4,
          y: y(Math.max(...x.values)) + 4,
          'text-anchor': 'end',
          class: 'gpuprof-w-axis'
        },
        ms(Math.max(...x.values))
      ),
      s(
        'text',
        {
          x: x0 - 4,
          y: y(Math.min(...x.values)) + 4,
          'text-anchor': 'end',
          class: 'gpuprof-w-axis'
        },
        ms(Math.min(...x.values))
      )
    );
    const median = x.median;
    if (median !== null) {
      g.append(
        s('line', {
          x1: x0,
          x2: x0 + w - 8,
          y1: y(median),
          y2: y(median),
          class: 'gpuprof-w-median'
        })
      );
    }
    const dx = (w - 16) / Math.max(x.values.length - 1, 1);
    x.values.forEach((v, i) => {
      const dot = s('circle', { cx: x0 + 8 + i * dx, cy: y(v), r: 3, class: 'gpuprof-w-dot' });
      dot.append(s('title', {}, `${x.title} step ${i + 1}: ${ms(v)}`));
      g.append(dot);
    });
    if (median !== null) {
      g.append(
        s('text', { x: x0 + 4, y: HEIGHT - 6, class: 'gpuprof-w-axis' }, `median ${ms(median)}`)
      );
    }
    svg.append(g);
    left += w + PAD;
  }
}

/** The step-time chart (null without step times). */
export function stepChart(st: ISteps): HTMLDivElement | null {
  const series = stepSeries(st);
  if (!series.length) {
    return null;
  }
  const wrap = h('div', { class: 'gpuprof-w-stepchart' });
  const svg = s('svg', {
    width: '100%',
    role: 'img',
    'aria-label': 'Step time per step, ms (each panel on its own scale)'
  });
  let width = 720;
  draw(svg, series, width);
  if (typeof ResizeObserver !== 'undefined') {
    new ResizeObserver(() => {
      const w = Math.round(wrap.clientWidth);
      if (w >= 240 && Math.abs(w - width) >= 4) {
        width = w;
        draw(svg, series, width);
      }
    }).observe(wrap);
  }
  wrap.append(
    h(
      'div',
      { class: 'gpuprof-w-charttitle' },
      'Step time, ms per step (wall clock; each panel on its own scale)'
    ),
    svg
  );
  return wrap;
}
