import { boxView, pan, ticks, tickStep, zoom } from '../report/axis';
import { makeBasis } from '../report/basis';
import { LABEL_PX, laneEvents, lodRects, placeName } from '../report/lod';
import { busyText } from '../report/header';
import {
  alignedLabel,
  laneRank,
  rectTip,
  scaleLabel,
  stepNumber,
  stepTip
} from '../report/timeline';
import { timelinePanel } from '../report/timelinePanel';
import { IReportEnv } from '../report/env';
import { ITimeline } from '../report/summary';
import { bigTimeline, KERNELS_PER_STEP, STEP_US, stepDetail } from './bigTimeline';
import { mounted } from './mountedTimeline';
import { realSummary, sampleSummary } from './reportFixture';

afterEach(() => {
  document.body.replaceChildren();
});

describe('timeline view maths', () => {
  it('zooms around a time, inside the window, never below 1 µs', () => {
    expect(zoom({ v0: 0, v1: 1000 }, 500, 0.8, 1000)).toEqual({ v0: 100, v1: 900 });
    expect(zoom({ v0: 0, v1: 1000 }, 100, 1.25, 1000)).toEqual({ v0: 0, v1: 1000 });
    const tiny = zoom({ v0: 10, v1: 10.5 }, 10.2, 0.8, 1000);
    expect(tiny.v1 - tiny.v0).toBeCloseTo(1);
  });

  it('pans keeping the width and the window bounds; box views are ordered and clamped', () => {
    expect(pan({ v0: 100, v1: 300 }, 50, 1000)).toEqual({ v0: 50, v1: 250 });
    expect(pan({ v0: 100, v1: 300 }, -5000, 1000)).toEqual({ v0: 800, v1: 1000 });
    expect(boxView(700, -20, 1000)).toEqual({ v0: 0, v1: 700 });
    expect(boxView(5, 5, 1000)).toEqual({ v0: 5, v1: 6 });
  });

  it('puts round ticks from a step start, in µs below 2 ms near it, never five-digit µs', () => {
    expect(tickStep(10_000)).toBe(2000);
    expect(ticks({ v0: 0, v1: 10_000 }, 0).map(t => t.label)).toEqual([
      '0 ms',
      '2 ms',
      '4 ms',
      '6 ms',
      '8 ms',
      '10 ms'
    ]);
    expect(ticks({ v0: 40_100, v1: 41_100 }, 40_000).map(t => t.label)).toEqual([
      '200 µs',
      '400 µs',
      '600 µs',
      '800 µs',
      '1000 µs'
    ]);
    // far from the origin a narrow view reads in ms, with the decimals its spacing needs
    expect(ticks({ v0: 40_100, v1: 41_100 }, 0, 2).map(t => t.label)).toEqual([
      '40.5 ms',
      '41.0 ms'
    ]);
    expect(ticks({ v0: 40_100, v1: 40_130 }, 0, 3).map(t => t.label)).toEqual([
      '40.10 ms',
      '40.11 ms',
      '40.12 ms',
      '40.13 ms'
    ]);
  });
});

describe('level of detail', () => {
  it('keeps real events of inlined steps and the bounded rectangles elsewhere', () => {
    const ev = laneEvents(bigTimeline());
    // step 3: its 1,200 kernels; step 4: the one bounded rectangle of 1,200 merged kernels
    expect(ev[1].start).toHaveLength(KERNELS_PER_STEP + 1);
    expect(ev[1].count[KERNELS_PER_STEP]).toBe(KERNELS_PER_STEP);
    expect(ev[1].label[0]).toBe('sm90_gemm_kernel_0');
    expect(ev[1].phase[0]).toBe('forward');
  });

  it('merges events closer than half a pixel, never across a drawn idle gap', () => {
    const ev = laneEvents(bigTimeline())[1];
    const full = lodRects(ev, 0, 62_000, 62_000 / 720, [30_000]);
    expect(full.length).toBeLessThan(10);
    const split = full.find(r => r.start >= 30_000)!;
    expect(split.start).toBeGreaterThanOrEqual(30_800); // nothing drawn across the sync gap
    expect(full.every(r => r.end <= 30_000 || r.start >= 30_800)).toBe(true);
    // a gap too narrow to see still splits the run it falls in
    const two = {
      start: [0, 1.2],
      dur: [1, 1],
      label: ['a', 'b'],
      phase: ['', ''],
      count: [1, 1]
    };
    expect(lodRects(two, 0, 100, 1).length).toBe(1);
    expect(lodRects(two, 0, 100, 1, [1.1]).length).toBe(2);
    // back-to-back kernels a few pixels wide stay apart: merging them hid every kernel name
    const wide = { ...two, start: [0, 10.2], dur: [10, 10] };
    expect(lodRects(wide, 0, 100, 1).map(r => r.label)).toEqual(['a', 'b']);
    // a narrow event beside a wide one does not swallow it
    const mixed = {
      start: [0, 1.2, 11.4],
      dur: [1, 10, 1],
      label: ['a', 'b', 'c'],
      phase: ['', '', ''],
      count: [1, 1, 1]
    };
    expect(lodRects(mixed, 0, 100, 1).map(r => r.count)).toEqual([1, 1, 1]);
    const near = lodRects(ev, 1000, 2000, 1000 / 720, [30_000]);
    expect(near.every(r => r.count === 1)).toBe(true);
    expect(near.length).toBeGreaterThanOrEqual(20);
  });

  it('names a wide rectangle inside, a short lone kernel beside it when the lane is free', () => {
    const one = { start: 0, end: 1, count: 1, label: 'flash_fwd_kernel', phase: '' };
    expect(placeName(one, 200, 200 + LABEL_PX, 400)).toEqual({
      x: 203,
      text: 'fla…',
      inside: true
    });
    // 4 px wide, 200 px of empty lane before the next kernel: the name goes beside it
    expect(placeName(one, 200, 204, 404)).toEqual({
      x: 207,
      text: 'flash_fwd_kernel',
      inside: false
    });
    expect(placeName(one, 200, 204, 230)).toBeNull(); // no room before the next one
    expect(placeName({ ...one, count: 9 }, 200, 204, 404)).toBeNull(); // a merged run
  });

  it('describes a rectangle: one kernel by name, or how many were merged', () => {
    expect(rectTip({ start: 0, end: 25, count: 1, label: 'k', phase: 'forward' })).toBe(
      'k\nphase: forward\n25 µs'
    );
    expect(rectTip({ start: 0, end: 2500, count: 40, label: 'k', phase: '' })).toBe(
      '40 events (zoom in to split)\n2.50 ms'
    );
  });
});

describe('timeline panel', () => {
  it('aggregates at full view and names individual kernels in a 1 ms window', () => {
    const { rects, names, drag, axis, svg, mouse, wrap } = mounted();
    expect(rects(1)).toBeLessThan(40); // 2,400 kernels drawn as a few runs
    expect(names().filter(n => n?.startsWith('sm90_gemm'))).toEqual([]);
    // box-zoom about 1 ms: 720 px hold 124 ms, so 6 px are 1.03 ms
    drag(170 + 50, 170 + 56);
    // every kernel its own rectangle (about 20 in 1 ms); the wide GEMMs named in full
    expect(rects(1)).toBeGreaterThanOrEqual(18);
    // the wide GEMMs carry their names (cut to fit), the tooltip the whole name
    const named = names().filter(n => n?.startsWith('sm90_gemm_kern'));
    expect(named.length).toBeGreaterThanOrEqual(4);
    const label = Array.from(svg.querySelectorAll('.gpuprof-w-name')).find(t =>
      t.textContent?.startsWith('sm90_gemm')
    ) as SVGTextElement;
    const rect = svg.querySelector(
      `rect[data-lane="1"][data-i="${label.dataset.i}"]`
    ) as SVGRectElement;
    mouse('mousemove', { clientX: 300, clientY: 40 }, rect);
    const tip = wrap.querySelector('.gpuprof-w-tip') as HTMLElement;
    expect(tip.textContent).toMatch(
      /^stream 7 compute\nsm90_gemm_kernel_\d+\nphase: forward\n0\.15 ms$/
    );
    // 1 ms, 8.7 ms into the step: ms ticks with the one decimal they need, not "8700 µs"
    const labels = axis().filter(a => /^[\d.]+ (ms|µs)$/.test(a ?? ''));
    expect(labels.length).toBeGreaterThanOrEqual(5);
    expect(labels.every(a => /^\d+\.\d ms$/.test(a!))).toBe(true);
  });

  it('leaves a plain wheel to the page; Ctrl or Cmd + wheel zooms', () => {
    const { wheel, axis } = mounted();
    const before = axis();
    expect(wheel({ clientX: 300, deltaY: -100 })).toBe(false);
    expect(axis()).toEqual(before);
    expect(wheel({ clientX: 300, deltaY: -100, ctrlKey: true })).toBe(true);
    expect(axis()).not.toEqual(before);
    const zoomed = axis();
    expect(wheel({ clientX: 300, deltaY: -100, metaKey: true })).toBe(true);
    expect(axis()).not.toEqual(zoomed);
  });

  it('zooms with W/S and pans with A/D, as Perfetto does', () => {
    const { key, axis, svg } = mounted();
    const full = axis();
    expect(svg.dataset.viewUs).toBe(String(2 * STEP_US));
    key('w');
    const inView = axis();
    expect(inView).not.toEqual(full);
    // W keeps 0.6 of the window, and says so on the chart
    expect(svg.dataset.viewUs).toBe(String(0.6 * 2 * STEP_US));
    key('d');
    expect(axis()).not.toEqual(inView);
    key('a');
    expect(axis()).toEqual(inView);
    key('s');
    expect(axis()).toEqual(full);
    key('q');
    expect(axis()).toEqual(full);
  });

  it('zooms to a step when its band is clicked, reading time from the step start', () => {
    const { svg, mouse, axis } = mounted();
    const band = svg.querySelector('rect.gpuprof-w-step[data-step="1"]') as SVGRectElement;
    mouse('mousedown', { clientX: 600 }, band);
    mouse('mouseup', { clientX: 600 }, band);
    const labels = axis();
    expect(labels[0]).toBe('0 ms');
    expect(labels).toContain('60 ms');
    // steps numbered 1..n as on every surface (the profiler's ids 3 and 4 stay in the tooltip)
    expect(labels[labels.length - 1]).toBe(
      'profiled time (×1.52 of real), from the start of step 2'
    );
    mouse('dblclick', {});
    expect(axis()[axis().length - 1]).toBe(
      'profiled time (×1.52 of real), from the start of step 1'
    );
  });

  it('marks the steps whose every kernel is at hand, and says where they are without a server', () => {
    const { svg, mouse, wrap } = mounted();
    const band = (i: number) =>
      svg.querySelector(`rect.gpuprof-w-step[data-step="${i}"]`) as SVGRectElement;
    expect([band(0).dataset.events, band(1).dataset.events]).toEqual(['all', 'merged']);
    mouse('mousemove', { clientX: 600, clientY: 5 }, band(1));
    const tip = wrap.querySelector('.gpuprof-w-tip') as HTMLElement;
    expect(tip.textContent).toContain('click to zoom · events merged: every kernel is in step 1');
    expect(tip.textContent).toMatch(/^step 2: .*profiler step #4\)/);
    mouse('mousemove', { clientX: 300, clientY: 5 }, band(0));
    expect(tip.textContent).toMatch(/click to zoom$/);
  });

  it('loads the events of a step the summary does not carry once the view holds that step', async () => {
    const asked: number[] = [];
    const env: IReportEnv = {
      loadStep: async step => {
        asked.push(step);
        const strings = ['forward', 'backward', 'optimizer'];
        for (let k = 0; k < KERNELS_PER_STEP; k++) {
          strings.push(`loaded_kernel_${k}`);
        }
        return { strings, detail: stepDetail(3) };
      }
    };
    const { svg, mouse, drag, names } = mounted(bigTimeline(), env);
    expect(asked).toEqual([]);
    const band = svg.querySelector('rect.gpuprof-w-step[data-step="1"]') as SVGRectElement;
    mouse('mousedown', { clientX: 600 }, band);
    mouse('mouseup', { clientX: 600 }, band);
    expect(asked).toEqual([4]);
    await new Promise(r => setTimeout(r, 0));
    drag(170 + 12, 170 + 24); // 1 ms of step 4
    expect(names().some(n => n?.startsWith('loaded_kernel_'))).toBe(true);
  });

  it('names lanes, labels phases and gap causes, and says the time is profiled', () => {
    const { svg, wrap } = mounted();
    expect(Array.from(svg.querySelectorAll('.gpuprof-w-lane')).map(t => t.textContent)).toEqual([
      'main thread',
      'stream 7 compute'
    ]);
    const keys = Array.from(wrap.querySelectorAll('.gpuprof-w-key')).map(k => k.textContent);
    expect(keys).toEqual([
      'forward',
      'backward',
      'optimizer',
      'data',
      'other',
      'input',
      'transfer',
      'sync',
      'launch',
      'host'
    ]);
    expect(scaleLabel(null)).toBe('profiled time');
    expect(svg.querySelector('rect[data-lane="1"]')?.getAttribute('style')).toContain(
      'var(--gpuprof-c-'
    );
  });

  it('states GPU busy once, real and under the profiler, on the report basis', () => {
    const sm = sampleSummary();
    expect(busyText(sm)).toBe('GPU busy 35% real / 40% under profiler');
    const panel = timelinePanel(sm, makeBasis(sm, 'step'));
    expect(panel.querySelector('.gpuprof-w-busy')?.textContent).toBe(
      'GPU busy 35% real / 40% under profiler; busy 4.00 ms (ms per real step); GPU idle by cause (ms per real step): input 5.00 ms.'
    );
    const total = timelinePanel(sm, makeBasis(sm, 'total'));
    expect(total.querySelector('.gpuprof-w-busy')?.textContent).toContain(
      'busy 12.00 ms (ms, total of 3 profiled steps)'
    );
  });

  it('explains a missing timeline, pointing traces that are not one job at one trace', () => {
    const sm = sampleSummary();
    sm.timeline = null;
    sm.ranks = [
      { rank: 0, step_median_ms: 10, busy_pct: 35 },
      { rank: 1, step_median_ms: 10, busy_pct: 35 }
    ];
    expect(
      timelinePanel(sm, makeBasis(sm, 'step')).querySelector('.gpuprof-w-empty')?.textContent
    ).toBe(
      'No timeline: the trace holds no events in the profiled window (traces that are not the ranks of one job are not lined up: open one trace).'
    );
  });
});

describe('multi-rank timeline', () => {
  /** The committed two-rank summary (tests/report/test_model.py checks it is Python's answer). */
  const twoRanks = (): ITimeline => {
    const tl = realSummary('ddp_workload_comm').timeline;
    if (!tl) {
      throw new Error('the two-rank summary has lost its timeline');
    }
    return tl;
  };

  it('draws one lane group per rank, ruled apart, and says how the ranks were aligned', () => {
    const tl = twoRanks();
    const { svg } = mounted(tl);
    const labels = Array.from(svg.querySelectorAll('.gpuprof-w-lane')).map(t => t.textContent);
    const ranks = tl.lanes.map(lane => laneRank(lane.id));
    expect(ranks[0]).toBe(0);
    expect(ranks[ranks.length - 1]).toBe(1);
    expect(ranks).toEqual([...ranks].sort());
    expect(labels.every(l => /^rank [01] · /.test(l ?? ''))).toBe(true);
    expect(svg.querySelectorAll('.gpuprof-w-rankline').length).toBe(1);
    expect(svg.querySelector('.gpuprof-w-axis-title')?.textContent).toContain(
      'ranks aligned by collectives'
    );
    expect(svg.querySelectorAll('.gpuprof-w-gap').length).toBe(0);
  });

  it('reads the rank of a lane id and words each alignment', () => {
    expect(laneRank('rank12:gpu:0:7')).toBe(12);
    expect(laneRank('gpu:0:7')).toBeNull();
    expect(alignedLabel(null)).toBe('');
    expect(alignedLabel('step 4')).toBe(' · ranks aligned by step 4');
    expect(alignedLabel('recorded clocks')).toBe(' · ranks aligned by recorded clocks');
  });
});

describe('step bands', () => {
  it("number the steps 1..n and time them as the step series does, the profiler's id beside", () => {
    // the band spans host start to GPU end (92.6 ms here); the step's own time is 77.5 ms
    const st = { step: 12, start: 0, end: 92600, number: 3, dur_ms: 77.5 };
    expect(stepNumber(st, 0)).toBe(3);
    expect(stepTip(st, 0, null)).toBe('step 3: 77.50 ms (profiled time; profiler step #12)');
    // an older summary without the model's number or time: position and span
    expect(stepNumber({ step: 12, start: 0, end: 2000 }, 4)).toBe(5);
    expect(stepTip({ step: 12, start: 0, end: 2000 }, 4, 2)).toBe(
      'step 5: 2.00 ms (profiled time (×2.00 of real); profiler step #12)'
    );
  });

  it("read every step of a real run's summary the way its step chart does", () => {
    const sm = realSummary();
    const tl = sm.timeline!;
    expect(tl.steps.map((st, i) => stepNumber(st, i))).toEqual(
      sm.steps.profiled_ms.map((_, i) => i + 1)
    );
    expect(tl.steps.map(st => st.dur_ms)).toEqual(sm.steps.profiled_ms);
    expect(tl.steps.map(st => st.step)).toEqual(sm.steps.profiled_step_ids);
  });
});
