import { renderReport } from '../report/report';
import { OPEN_STEP_EVENT, stepChart } from '../report/stepchart';
import {
  axisLabels,
  isClipped,
  labelRoom,
  outlierCap,
  placeValueLabel,
  quantile,
  stepScale
} from '../report/stepscale';
import { realSummary } from './reportFixture';
import * as fs from 'fs';
import * as path from 'path';

/** Step series with the axis the Python static charts decide for them (views/step_scale.py). */
interface IScaleCase {
  name: string;
  values: number[];
  cap: number | null;
  lo: number;
  hi: number;
  clipped: number[];
}
const SHARED: IScaleCase[] = JSON.parse(
  fs.readFileSync(
    path.join(__dirname, '..', '..', 'tests', 'data', 'expected', 'step_scale.json'),
    'utf8'
  )
);

const SPIKED = [74.8, 75.1, 74.6, 1079.7, 75.0, 74.9, 75.3, 74.7];

describe('step scale', () => {
  it('decides every shared series as the static charts do (tests/data/expected/step_scale.json)', () => {
    expect(SHARED.length).toBeGreaterThan(40);
    expect(SHARED.filter(c => c.cap !== null).length).toBeGreaterThan(5);
    for (const c of SHARED) {
      const scale = stepScale(c.values, false);
      const got = {
        name: c.name,
        clipped: c.values.flatMap((v, i) => (isClipped(scale, v) ? [i] : [])),
        capped: scale.cap !== null
      };
      expect(got).toEqual({ name: c.name, clipped: c.clipped, capped: c.cap !== null });
      if (c.cap !== null) {
        expect(scale.cap).toBeCloseTo(c.cap, 9);
      }
      expect(scale.lo).toBeCloseTo(c.lo, 9);
      expect(scale.hi).toBeCloseTo(c.hi, 9);
    }
  });

  it('interpolates quantiles', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantile([1, 2, 3, 4], 0.25)).toBeCloseTo(1.75);
  });

  it('clips a far spike so the other steps keep their own scale', () => {
    const scale = stepScale(SPIKED, false);
    expect(scale.cap).not.toBeNull();
    expect(isClipped(scale, 1079.7)).toBe(true);
    expect(SPIKED.filter(v => isClipped(scale, v))).toEqual([1079.7]);
    expect(scale.frac(1079.7)).toBe(1);
    // the drawn range holds the other steps, not 0 .. 1,080 ms
    expect(scale.hi).toBeLessThan(100);
    expect(scale.lo).toBeGreaterThan(50);
  });

  it('draws a spread small beside the step small, a large one large', () => {
    const jitter = [74.0, 75.0, 76.0, 75.5]; // 2 ms on a 75 ms step
    const jit = stepScale(jitter, false);
    expect(jit.frac(76) - jit.frac(74)).toBeLessThan(0.15);
    const wide = [40, 80, 120, 100]; // 80 ms on a 90 ms step
    const big = stepScale(wide, false);
    expect(big.frac(120) - big.frac(40)).toBeGreaterThan(0.8);
  });

  it('never clips ordinary jitter, a short panel or a slow-but-close step', () => {
    expect(outlierCap([74.6, 75.3, 74.8, 76.2, 75.0])).toBeNull();
    expect(outlierCap([75, 1079.7, 75])).toBeNull(); // too few steps to call one an outlier
    // 3 IQR above the third quartile but not 1.5x the median: drawn, not clipped
    expect(outlierCap([100, 100.1, 100.2, 100.1, 100.0, 120])).toBeNull();
  });

  it('draws every step on the log scale, none clipped, spike and spread both visible', () => {
    const scale = stepScale(SPIKED, true);
    expect(scale.cap).toBeNull();
    expect(SPIKED.some(v => isClipped(scale, v))).toBe(false);
    expect(scale.frac(1079.7)).toBeLessThan(1);
    expect(scale.frac(74.6)).toBeGreaterThan(0);
    expect(scale.frac(1079.7) - scale.frac(75.3)).toBeGreaterThan(0.5);
  });

  it('writes one y label when min and max read alike or would overprint', () => {
    const flat = [74.8, 74.8, 74.801, 74.8];
    expect(axisLabels(stepScale(flat, false), flat, 126).map(l => l.text)).toEqual(['74.80 ms']);
    const close = [100, 100.5, 100.2, 100.3];
    const log = stepScale([...close, 5000], true);
    // on the log scale these sit within a few px of each other: one label
    expect(axisLabels(log, close, 126)).toHaveLength(1);
    const spread = [60, 75, 90, 74, 1079.7];
    const apart = axisLabels(stepScale(spread, false), spread, 126).map(l => l.text);
    expect(apart).toEqual(['90.00 ms', '60.00 ms']); // the clipped spike is no axis label
  });

  it('leaves room for the widest label and writes a clipped value whole inside its panel', () => {
    const room = labelRoom([{ value: 1079.7, text: '1,079.70 ms' }]);
    expect(room).toBeGreaterThanOrEqual('1,079.70 ms'.length * 6.5);
    const right = placeValueLabel(20, '1,079.70 ms', 0, 300);
    expect(right).toEqual({ x: 26, anchor: 'start' });
    const atEdge = placeValueLabel(290, '1,079.70 ms', 0, 300);
    expect(atEdge.anchor).toBe('end');
    expect(atEdge.x - '1,079.70 ms'.length * 6.5).toBeGreaterThanOrEqual(0);
  });
});

describe('step chart', () => {
  const steps = () => {
    const st = realSummary().steps;
    st.profiled_ms = SPIKED.slice();
    return st;
  };

  it('labels a clipped spike with its full time and counts it in the panel title', () => {
    const chart = stepChart(steps(), 0)!;
    const clipped = Array.from(chart.querySelectorAll('.gpuprof-w-clipped')).map(
      t => t.textContent
    );
    expect(clipped).toEqual(['1,079.70 ms']);
    const title = chart.querySelector('.gpuprof-w-series-profiled .gpuprof-w-series-title');
    expect(title!.textContent).toContain('1 above the scale');
  });

  it('toggles a log scale that draws the spike unclipped', () => {
    const chart = stepChart(steps(), 0)!;
    const toggle = chart.querySelector('.gpuprof-w-logtoggle') as HTMLButtonElement;
    toggle.click();
    expect(toggle.getAttribute('aria-pressed')).toBe('true');
    expect(chart.querySelectorAll('.gpuprof-w-clipped')).toHaveLength(0);
    expect(chart.textContent).toContain('log scale');
  });

  it('makes every dot focusable and named; linked ones open their step on click and Enter', () => {
    const chart = stepChart(steps(), 3)!;
    const dots = chart.querySelectorAll<SVGElement>('.gpuprof-w-series-profiled .gpuprof-w-dot');
    expect(dots).toHaveLength(SPIKED.length);
    dots.forEach(d => expect(d.getAttribute('tabindex')).toBe('0'));
    expect(dots[2].getAttribute('aria-label')).toBe(
      'profiled step 3: 74.60 ms; open it in the timeline'
    );
    expect(dots[3].getAttribute('role')).toBe('img'); // beyond the timeline's steps
    const opened: number[] = [];
    chart.addEventListener(OPEN_STEP_EVENT, ev =>
      opened.push((ev as CustomEvent<{ index: number }>).detail.index)
    );
    dots[1].dispatchEvent(new MouseEvent('click', { bubbles: true }));
    dots[2].dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
    dots[3].dispatchEvent(new MouseEvent('click', { bubbles: true }));
    expect(opened).toEqual([1, 2]);
  });

  it('opens the timeline tab zoomed to the step a dot names', () => {
    const sm = realSummary();
    const root = renderReport(sm);
    document.body.append(root);
    const dot = root.querySelector<SVGElement>(
      '.gpuprof-w-series-profiled .gpuprof-w-dot[role=button]'
    )!;
    dot.dispatchEvent(new MouseEvent('click', { bubbles: true }));
    const panel = root.querySelector('.gpuprof-w-panel-timeline') as HTMLElement;
    expect(panel.hidden).toBe(false);
    const st = sm.timeline!.steps[0];
    const svg = panel.querySelector('.gpuprof-w-tl') as SVGSVGElement;
    expect(Number(svg.dataset.viewUs)).toBeCloseTo(st.end - st.start, -1);
    expect(document.activeElement).toBe(svg);
    root.remove();
  });
});
