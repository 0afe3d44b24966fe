/**
 * The step-time chart: warm-up, baseline and profiled steps in side-by-side panels, each on its
 * own scale (stepscale.ts: far outliers clipped and labelled, or log) so neither the slower
 * profiled steps nor one spike squash a spread. Drawn to the output's width, text in the theme's
 * colours; every dot focusable, a profiled one opening its step in the timeline.
 */
import { h, ms, s } from './dom';
import { axisLabels, isClipped, labelRoom, placeValueLabel, stepScale } from './stepscale';
import { ISteps } from './summary';

const HEIGHT = 170;
const TOP = 22;
const BOTTOM = 22;

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

/** Event a step dot sends (bubbling) to open profiled step `detail.index` in the timeline. */
export const OPEN_STEP_EVENT = 'gpuprof-open-step';

/** The dot of step `i` of series `x`: focusable, named, and a link to the timeline if `linked`. */
function dot(x: ISeries, i: number, cx: number, cy: number, clipped: boolean, linked: boolean) {
  const v = x.values[i];
  const label = `${x.title} step ${i + 1}: ${ms(v)}`;
  const el = clipped
    ? s('path', { d: `M${cx - 4},${cy + 3} L${cx + 4},${cy + 3} L${cx},${cy - 4} Z` })
    : s('circle', { cx, cy, r: 3 });
  el.setAttribute('class', `gpuprof-w-dot${clipped ? ' gpuprof-w-dot-clipped' : ''}`);
  el.setAttribute('tabindex', '0');
  el.setAttribute('role', linked ? 'button' : 'img');
  el.setAttribute(
    'aria-label',
    `${label}${clipped ? ' (above the scale)' : ''}${linked ? '; open it in the timeline' : ''}`
  );
  el.dataset.series = x.key;
  el.dataset.index = String(i);
  el.append(s('title', {}, `${label}${linked ? ' · click: open in the timeline' : ''}`));
  if (linked) {
    const open = () =>
      el.dispatchEvent(new CustomEvent(OPEN_STEP_EVENT, { bubbles: true, detail: { index: i } }));
    el.addEventListener('click', open);
    el.addEventListener('keydown', ev => {
      if ((ev as KeyboardEvent).key === 'Enter' || (ev as KeyboardEvent).key === ' ') {
        ev.preventDefault();
        open();
      }
    });
  }
  return el;
}

/**
 * Draw the chart into an SVG of `width` px, each panel on the scale `stepScale` decides;
 * the first `linked` profiled steps open in the timeline.
 */
function draw(
  svg: SVGSVGElement,
  series: ISeries[],
  width: number,
  log: boolean,
  linked: number
): void {
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${width} ${HEIGHT}`);
  const plotH = HEIGHT - TOP - BOTTOM;
  const scales = series.map(x => stepScale(x.values, log));
  const labels = series.map((x, k) => axisLabels(scales[k], x.values, plotH));
  const pads = labels.map(labelRoom);
  const weight = (x: ISeries) => Math.max(x.values.length, 12);
  const total = series.reduce((n, x) => n + weight(x), 0);
  const room = width - pads.reduce((a, b) => a + b, 0);
  let left = 0;
  series.forEach((x, k) => {
    const scale = scales[k];
    const w = (room * weight(x)) / total;
    const x0 = left + pads[k];
    const y = (v: number) => TOP + (1 - scale.frac(v)) * plotH;
    const nClipped = x.values.filter(v => isClipped(scale, v)).length;
    const g = s('g', { class: `gpuprof-w-series gpuprof-w-series-${x.key}` });
    const clippedNote = nClipped ? `, ${nClipped} above the scale` : '';
    g.append(
      s(
        'text',
        { x: x0, y: 12, class: 'gpuprof-w-axis gpuprof-w-series-title' },
        `${x.title} (n=${x.values.length}${clippedNote})`
      ),
      s('line', { x1: x0, x2: x0, y1: TOP, y2: HEIGHT - BOTTOM, class: 'gpuprof-w-tick' })
    );
    for (const l of labels[k]) {
      g.append(
        s(
          'text',
          { x: x0 - 4, y: y(l.value) + 4, 'text-anchor': 'end', class: 'gpuprof-w-axis' },
          l.text
        )
      );
    }
    if (nClipped) {
      // the broken top edge: steps above it are drawn on it, their time written beside them
      g.append(
        s('line', { x1: x0, x2: x0 + w - 8, y1: TOP, y2: TOP, class: 'gpuprof-w-clipline' })
      );
    }
    const median = x.median;
    if (median !== null && !isClipped(scale, median)) {
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
      const cx = x0 + 8 + i * dx;
      const clipped = isClipped(scale, v);
      g.append(dot(x, i, cx, y(v), clipped, x.key === 'profiled' && i < linked));
      if (clipped) {
        const text = ms(v);
        const at = placeValueLabel(cx, text, x0, x0 + w);
        g.append(
          s(
            'text',
            {
              x: at.x,
              y: TOP + 4,
              'text-anchor': at.anchor,
              class: 'gpuprof-w-axis gpuprof-w-clipped'
            },
            text
          )
        );
      }
    });
    if (median !== null) {
      g.append(
        s('text', { x: x0 + 4, y: HEIGHT - 6, class: 'gpuprof-w-axis' }, `median ${ms(median)}`)
      );
    }
    svg.append(g);
    left += w + pads[k];
  });
}

/**
 * The step-time chart (null without step times): a log-scale toggle above it; the first
 * `linked` profiled steps' dots open that step in the timeline (`OPEN_STEP_EVENT`).
 */
export function stepChart(st: ISteps, linked = 0): HTMLDivElement | null {
  const series = stepSeries(st);
  if (!series.length) {
    return null;
  }
  const wrap = h('div', { class: 'gpuprof-w-stepchart' });
  const svg = s('svg', {
    width: '100%',
    role: 'group',
    'data-chart': 'steps',
    'aria-label': 'Step time per step, ms (each panel on its own scale); one point per step'
  });
  let width = 720;
  let log = false;
  const title = h('span');
  const retitle = () => {
    title.textContent = log
      ? 'Step time, ms per step (wall clock; log scale, each panel on its own)'
      : 'Step time, ms per step (wall clock; each panel on its own scale, far outliers drawn on its top edge)';
  };
  const toggle = h('button', {
    type: 'button',
    class: 'gpuprof-w-toolbtn gpuprof-w-logtoggle',
    'aria-pressed': 'false'
  });
  toggle.textContent = 'Log scale';
  toggle.addEventListener('click', () => {
    log = !log;
    toggle.setAttribute('aria-pressed', String(log));
    retitle();
    draw(svg, series, width, log, linked);
  });
  retitle();
  draw(svg, series, width, log, linked);
  if (typeof ResizeObserver !== 'undefined') {
    new ResizeObserver(() => {
      const w = Math.round(wrap.clientWidth);
      if (w >= 240 && Math.abs(w - width) >= 4) {
        width = w;
        draw(svg, series, width, log, linked);
      }
    }).observe(wrap);
  }
  wrap.append(h('div', { class: 'gpuprof-w-charttitle' }, title, ' ', toggle), svg);
  return wrap;
}
