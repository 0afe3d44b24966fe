/**
 * The memory lane under the timeline: the allocator's allocated bytes over the recorded steps
 * (`summary.memory.over_step.series_us/series_bytes`), the forward / backward / optimizer ranges
 * as bands and the peak marked and explained, all as the model gives them. Its plot spans the
 * timeline's plot (the same label column and right margin); its clock is the history's, which
 * was recorded in the untraced steps before the traced ones, so its axis is its own.
 */
import { gb, h, ms, s } from './dom';
import { IReportSummary } from './summary';
import { LEFT } from './timelineDrawing';

/** `summary.memory.over_step` when present. */
export type IOverStep = NonNullable<IReportSummary['memory']['over_step']>;

/** Height (px) of the lane: the line's band and its axis. */
export const MEM_LANE_H = 100;
const TOP = 34;
const PLOT_H = 44;

/** The non-zero kinds at the peak, in the model's order ("activations saved for backward 3.16 GB"). */
export function kindsAtPeak(m: IOverStep): string {
  return m.kinds
    .filter(k => k.bytes_at_peak > 0)
    .map(k => `${k.label} ${gb(k.bytes_at_peak)}`)
    .join(', ');
}

/** "peak 5.86 GB at 20.26 ms (backward)", the time from the lane's start (memory_text.peak_head). */
export function peakHead(m: IOverStep): string {
  const at = m.series_us.length ? ` at ${ms((m.peak_us - m.series_us[0]) / 1000)}` : '';
  const phase = m.peak_phase ? ` (${m.peak_phase})` : '';
  return `peak ${gb(m.peak_bytes)}${at}${phase}`;
}

/** The peak mark and what is held there: "peak 5.86 GB at … (backward): parameters 0.33 GB, …". */
export function peakLabel(m: IOverStep): string {
  return `${peakHead(m)}: ${kindsAtPeak(m)}`;
}

/** The lane as an SVG `width` px wide (the timeline's viewBox width). */
export function memoryLane(m: IOverStep, width = 900): SVGSVGElement {
  const plotW = width - LEFT - 10;
  const svg = s('svg', {
    width: '100%',
    viewBox: `0 0 ${width} ${MEM_LANE_H}`,
    class: 'gpuprof-w-memlane',
    role: 'img',
    'data-chart': 'memory-lane',
    'aria-label': `Memory allocated over the recorded steps: ${peakLabel(m)}`
  });
  const t0 = m.series_us[0] ?? 0;
  const t1 = m.series_us[m.series_us.length - 1] ?? t0;
  const span = Math.max(t1 - t0, 1);
  const x = (t: number) => LEFT + ((t - t0) / span) * plotW;
  const top = Math.max(m.peak_bytes, 1);
  const y = (v: number) => TOP + PLOT_H - (v / top) * PLOT_H;
  svg.append(
    s('text', { x: 4, y: TOP + 12, class: 'gpuprof-w-lane' }, 'memory allocated'),
    s('text', { x: 4, y: TOP + 26, class: 'gpuprof-w-axis' }, `0 to ${gb(m.peak_bytes)}`)
  );
  for (const p of m.phases) {
    const band = s('rect', {
      x: x(p.start_us),
      y: TOP,
      width: Math.max(x(p.end_us) - x(p.start_us), 1),
      height: PLOT_H,
      class: `gpuprof-w-memphase gpuprof-w-memphase-${p.name}`
    });
    band.append(s('title', {}, `${p.name} ${ms((p.end_us - p.start_us) / 1000)}`));
    svg.append(band);
  }
  let d = '';
  m.series_us.forEach((t, i) => {
    d += i ? ` H${x(t)} V${y(m.series_bytes[i])}` : `M${x(t)},${y(m.series_bytes[i])}`;
  });
  if (d) {
    svg.append(s('path', { d, class: 'gpuprof-w-counter gpuprof-w-memline' }));
  }
  const px = x(m.peak_us);
  const label = peakLabel(m);
  const mark = s('g', { class: 'gpuprof-w-mempeak' });
  mark.append(
    s('line', { x1: px, x2: px, y1: TOP - 4, y2: TOP + PLOT_H }),
    s('circle', { cx: px, cy: y(m.peak_bytes), r: 3 }),
    s('title', {}, label)
  );
  const right = px > LEFT + plotW / 2;
  // two lines: the peak beside its mark, then what is held at it from the left edge (it is long)
  const head = s(
    'text',
    {
      x: right ? px - 4 : px + 4,
      y: TOP - 20,
      'text-anchor': right ? 'end' : 'start',
      class: 'gpuprof-w-axis gpuprof-w-mempeak-label gpuprof-w-mempeak-head'
    },
    `${peakHead(m)}:`
  );
  const held = s(
    'text',
    { x: 4, y: TOP - 6, class: 'gpuprof-w-axis gpuprof-w-mempeak-label' },
    kindsAtPeak(m)
  );
  svg.append(
    mark,
    head,
    held,
    s('text', { x: LEFT, y: MEM_LANE_H - 6, class: 'gpuprof-w-axis' }, '0'),
    s(
      'text',
      { x: LEFT + plotW, y: MEM_LANE_H - 6, 'text-anchor': 'end', class: 'gpuprof-w-axis' },
      `${ms(span / 1000)} of recorded (untraced) steps`
    )
  );
  return svg;
}

/** The lane with its one-line caption (what it shows, what clock it is in). */
export function memoryLaneBlock(m: IOverStep): HTMLDivElement {
  return h(
    'div',
    { class: 'gpuprof-w-memlane-box' },
    memoryLane(m),
    h(
      'p',
      { class: 'gpuprof-w-hint' },
      `Allocator history of ${m.events.toLocaleString('en-US')} events, recorded in the steps ` +
        'before the traced ones (its own time axis); bands: forward, backward, optimizer.'
    )
  );
}
