/**
 * The timeline's tools: the tooltip kept inside the panel, a pinned event's details, CPU→GPU
 * flow arrows, search, the loading cue of a step's events and counter tracks.
 */
import { boxView } from '../report/axis';
import { IReportEnv } from '../report/env';
import { eventRows, nthHit, searchHits, tipPosition } from '../report/eventinfo';
import { laneEvents, lodRects } from '../report/lod';
import { bigTimeline } from './bigTimeline';
import { mounted } from './mountedTimeline';

afterEach(() => {
  document.body.replaceChildren();
});

describe('timeline tools', () => {
  it('keeps the tooltip inside the panel, flipped left of or above the pointer at an edge', () => {
    expect(tipPosition(100, 50, 200, 40, 900, 300)).toEqual({ left: 112, top: 62 });
    // near the right edge: left of the pointer, wholly inside
    const right = tipPosition(850, 50, 200, 40, 900, 300);
    expect(right.left + 200).toBeLessThanOrEqual(900);
    expect(right.left).toBe(850 - 12 - 200);
    // near the bottom: above the pointer
    expect(tipPosition(100, 290, 200, 40, 900, 300).top).toBe(290 - 12 - 40);
    // a tip wider than the space on either side still lies wholly inside the panel
    const wide = tipPosition(100, 50, 600, 40, 650, 300).left;
    expect(wide).toBeGreaterThanOrEqual(0);
    expect(wide + 600).toBeLessThanOrEqual(650);
  });

  it('pins a clicked event: its details below the chart, its outline drawn, Esc unpins', () => {
    const { wrap, svg, mouse, drag, key } = mounted();
    drag(170 + 50, 170 + 56);
    const rect = svg.querySelector('rect[data-lane="1"][data-i="3"]') as SVGRectElement;
    mouse('mousedown', { clientX: 300 }, rect);
    mouse('mouseup', { clientX: 300 }, rect);
    const panel = wrap.querySelector('.gpuprof-w-pinpanel') as HTMLElement;
    expect(panel.hidden).toBe(false);
    const rows = Array.from(panel.querySelectorAll('dt')).map(d => d.textContent);
    expect(rows).toEqual(['Event', 'Lane', 'Phase', 'Starts', 'Duration']);
    expect(panel.textContent).toContain('stream 7 compute');
    expect(panel.querySelector('dd')!.textContent).toMatch(/^sm90_gemm_kernel_\d+$/);
    expect(svg.querySelectorAll('.gpuprof-w-pinned')).toHaveLength(1);
    key('Escape');
    expect(panel.hidden).toBe(true);
    expect(svg.querySelectorAll('.gpuprof-w-pinned')).toHaveLength(0);
  });

  /** bigTimeline with its GPU events linked: launched from lane 0, 3 µs before they run. */
  const linked = () => {
    const tl = bigTimeline();
    const d = tl.detail[0]!;
    const strings = tl.strings;
    const code = (t: string) => (strings.includes(t) ? strings.indexOf(t) : strings.push(t) - 1);
    const gpu = d.lane.map(l => l === 1);
    d.corr = d.lane.map((_, i) => (gpu[i] ? 1000 + i : -1));
    d.launch_us = d.start_us.map((t, i) => (gpu[i] ? Math.max(t - 3, 0) : -1));
    d.launch_lane = d.lane.map((_, i) => (gpu[i] ? 0 : -1));
    d.op = d.lane.map((_, i) => (gpu[i] ? code('aten::mm') : -1));
    d.shape = d.lane.map((_, i) => (gpu[i] ? code('[[64, 128], [128, 256]]') : -1));
    d.config = d.lane.map((_, i) => (gpu[i] ? code('grid [80, 1, 1] · block [128, 1, 1]') : -1));
    return tl;
  };

  it('lists the launching op, shapes, grid/block, correlation and host launch of GPU work', () => {
    const tl = linked();
    const ev = laneEvents(tl);
    const r = lodRects(ev[1], 0, 100, 0.1)[0];
    const rows = eventRows(tl, ev, 1, r);
    expect(rows).toContainEqual(['Launched by', 'aten::mm']);
    expect(rows).toContainEqual(['Input shapes', '[[64, 128], [128, 256]]']);
    expect(rows).toContainEqual(['Launch config', 'grid [80, 1, 1] · block [128, 1, 1]']);
    expect(rows.find(x => x[0] === 'Correlation id')![1]).toMatch(/^10\d\d$/);
    expect(rows.find(x => x[0] === 'Host launch')![1]).toMatch(/^main thread, /);
    // a merged rectangle names no one op
    expect(eventRows(tl, ev, 1, { ...r, count: 40 }).map(x => x[0])).not.toContain('Launched by');
  });

  it('draws a CPU→GPU flow arrow for the pinned event and the hovered one', () => {
    const { svg, mouse, drag } = mounted(linked());
    drag(170 + 50, 170 + 56);
    const flows = () => svg.querySelectorAll('path.gpuprof-w-flow');
    expect(flows()).toHaveLength(0);
    const a = svg.querySelector('rect[data-lane="1"][data-i="3"]') as SVGRectElement;
    mouse('mousemove', { clientX: 300, clientY: 40 }, a);
    expect(flows()).toHaveLength(1); // hovered
    mouse('mousedown', { clientX: 300 }, a);
    mouse('mouseup', { clientX: 300 }, a);
    mouse('mousemove', { clientX: 300, clientY: 40 }, a);
    expect(flows()).toHaveLength(1); // pinned and hovered: one arrow
    const b = svg.querySelector('rect[data-lane="1"][data-i="6"]') as SVGRectElement;
    mouse('mousemove', { clientX: 320, clientY: 40 }, b);
    expect(flows()).toHaveLength(2); // pinned + hovered
    mouse('mouseleave', {});
    expect(flows()).toHaveLength(1); // the pinned one stays
    // from the launching lane's middle (lane 0: y 20 + 13) to the event's (lane 1: y 46 + 13)
    const d = flows()[0].getAttribute('d')!;
    expect(d).toMatch(/^M[\d.]+,33 C.* [\d.]+,59$/);
    expect(flows()[0].getAttribute('marker-end')).toMatch(/^url\(#gpuprof-clip-.*-arrow\)$/);
  });

  it('finds events by name: highlights them, dims the rest, Enter zooms to and pins the next', () => {
    const { wrap, svg } = mounted();
    const input = wrap.querySelector('.gpuprof-w-search') as HTMLInputElement;
    input.value = 'SM90_GEMM';
    input.dispatchEvent(new Event('input'));
    const n = searchHits(laneEvents(bigTimeline()), 'sm90_gemm').length;
    expect(n).toBeGreaterThan(0);
    expect(wrap.querySelector('.gpuprof-w-searchcount')!.textContent).toBe(
      `${n.toLocaleString()} matches`
    );
    expect(svg.querySelectorAll('.gpuprof-w-hit').length).toBeGreaterThan(0);
    expect(svg.querySelectorAll('.gpuprof-w-miss').length).toBeGreaterThan(0);
    input.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }));
    const first = nthHit(laneEvents(bigTimeline()), 'sm90_gemm', 0)!;
    const shown = boxView(first.from, first.to, bigTimeline().dur_us);
    expect(Number(svg.dataset.viewUs)).toBeCloseTo(shown.v1 - shown.v0, -1);
    expect(Number(svg.dataset.viewUs)).toBeLessThan(10_000); // zoomed in from the 2-step view
    expect((wrap.querySelector('.gpuprof-w-pinpanel') as HTMLElement).hidden).toBe(false);
    input.value = '';
    input.dispatchEvent(new Event('input'));
    expect(svg.querySelectorAll('.gpuprof-w-miss')).toHaveLength(0);
  });

  it('says a step is loading while its events are fetched, and why when they fail', async () => {
    let fail: (e: Error) => void = () => undefined;
    const env: IReportEnv = {
      loadStep: () =>
        new Promise((_, reject) => {
          fail = reject;
        })
    };
    const { wrap, svg, mouse } = mounted(bigTimeline(), env);
    const band = svg.querySelector('rect.gpuprof-w-step[data-step="1"]') as SVGRectElement;
    mouse('mousedown', { clientX: 600 }, band);
    mouse('mouseup', { clientX: 600 }, band);
    const status = wrap.querySelector('.gpuprof-w-loading') as HTMLElement;
    expect(status.getAttribute('role')).toBe('status');
    expect(status.textContent).toBe('Loading every event of step 4…');
    const loading = svg.querySelector('rect.gpuprof-w-step[data-step="1"]') as SVGRectElement;
    expect(loading.dataset.events).toBe('loading');
    fail(new Error('404 Not Found'));
    await new Promise(r => setTimeout(r, 0));
    expect(status.textContent).toContain("Step 4's events did not load (404 Not Found)");
  });

  it('draws a counter track under the lanes: its name, its peak, a step line, the axis below', () => {
    const tl = bigTimeline();
    tl.counters = [
      {
        id: 'memory:0',
        label: 'GPU 0 memory allocated',
        unit: 'GB',
        t: [0, 1000, 60_000],
        v: [1, 4.6992, 2]
      }
    ];
    const { svg } = mounted(tl);
    const lanes = Array.from(svg.querySelectorAll('.gpuprof-w-lane')).map(t => t.textContent);
    expect(lanes).toEqual(['main thread', 'stream 7 compute', 'GPU 0 memory allocated']);
    expect(svg.textContent).toContain('peak 4.70 GB');
    const line = svg.querySelector('path.gpuprof-w-counter') as SVGPathElement;
    // three steps: the peak at the top of its track (y 20 + 2·26 + 5), 1 GB and 2 GB lower
    expect(line.getAttribute('d')).toMatch(/^M170,[\d.]+ H[\d.]+ V77 H[\d.]+ V[\d.]+ H890$/);
    // the axis sits under the counter track, not over it
    const tick = svg.querySelector('line.gpuprof-w-tick') as SVGLineElement;
    expect(Number(tick.getAttribute('y1'))).toBe(20 + 2 * 26 + 30);
  });
});
