/**
 * Counter tracks under the timeline's lanes (`timeline.counters`: GPU memory allocated), each a
 * step line over its own 0..peak height, named and with its peak at the left as the model gives
 * them; drawn in the same view as the lanes.
 */
import { GB_DECIMALS } from '../generated/units';
import { fig, s } from './dom';
import { fit } from './lod';
import { ITimeline } from './summary';

/** Height of one counter track (px). */
export const COUNTER_H = 30;

/** The counter tracks of `tl`, the first at `y0`: labels left of `left`, lines at `x(t)` (px). */
export function counterTracks(
  tl: Pick<ITimeline, 'counters' | 'dur_us'>,
  x: (t: number) => number,
  y0: number,
  left: number
): { labels: SVGElement[]; lines: SVGElement[] } {
  const labels: SVGElement[] = [];
  const lines: SVGElement[] = [];
  (tl.counters ?? []).forEach((c, k) => {
    const top = y0 + k * COUNTER_H;
    const peak = Math.max(0, ...c.v);
    const y = (v: number) => top + COUNTER_H - 3 - (peak > 0 ? (v / peak) * (COUNTER_H - 8) : 0);
    const peakText = `peak ${fig(peak, GB_DECIMALS)} ${c.unit}`;
    labels.push(
      s('text', { x: 4, y: top + 12, class: 'gpuprof-w-lane' }, fit(c.label, left - 4)),
      s('text', { x: 4, y: top + 25, class: 'gpuprof-w-axis' }, fit(peakText, left - 4))
    );
    let d = '';
    c.t.forEach((t, i) => {
      d += i ? ` H${x(t)} V${y(c.v[i])}` : `M${x(t)},${y(c.v[i])}`;
    });
    if (d) {
      d += ` H${x(tl.dur_us)}`;
      const line = s('path', { d, class: 'gpuprof-w-counter' });
      line.append(s('title', {}, `${c.label}, ${peakText}`));
      lines.push(line);
    }
  });
  return { labels, lines };
}
