import { pan, rectTip, timelinePanel, zoom } from '../report/timeline';
import { sampleSummary } from './reportFixture';

/** The timeline panel in the document, its SVG laid out 900 px wide from x=0. */
function mounted() {
  const panel = timelinePanel(sampleSummary(), {});
  document.body.append(panel);
  const svg = panel.querySelector('svg.gpuprof-w-tl') as SVGSVGElement;
  svg.getBoundingClientRect = () => ({ left: 0, top: 0, width: 900, height: 100 }) as DOMRect;
  const axis = () => Array.from(svg.querySelectorAll('.gpuprof-w-axis')).map(t => t.textContent);
  const fire = (type: string, init: MouseEventInit & { deltaY?: number }, target: Element = svg) =>
    target.dispatchEvent(
      type === 'wheel'
        ? new WheelEvent(type, { bubbles: true, ...init })
        : new MouseEvent(type, { bubbles: true, ...init })
    );
  return { panel, svg, axis, fire };
}

afterEach(() => {
  document.body.replaceChildren();
});

describe('timeline view maths', () => {
  it('zooms around the pointer, inside the window, never below 1 µs', () => {
    expect(zoom({ v0: 0, v1: 1000 }, 500, 0.8, 1000)).toEqual({ v0: 100, v1: 900 });
    expect(zoom({ v0: 0, v1: 1000 }, 100, 1.25, 1000)).toEqual({ v0: 0, v1: 1000 });
    const tiny = zoom({ v0: 10, v1: 10.5 }, 10.2, 0.8, 1000);
    expect(tiny.v0).toBeCloseTo(10.04);
    expect(tiny.v1 - tiny.v0).toBeCloseTo(1);
  });

  it('pans keeping the width and the window bounds', () => {
    expect(pan({ v0: 100, v1: 300 }, 50, 1000)).toEqual({ v0: 50, v1: 250 });
    expect(pan({ v0: 100, v1: 300 }, 500, 1000)).toEqual({ v0: 0, v1: 200 });
    expect(pan({ v0: 100, v1: 300 }, -5000, 1000)).toEqual({ v0: 800, v1: 1000 });
  });

  it('explains a rectangle: kernel, op, shapes, duration, merged count', () => {
    const tl = sampleSummary().timeline!;
    expect(rectTip(tl, 1, 0)).toBe('ampere_sgemm\nop: aten::mm\nshapes: [[4, 4]]\n500.0 µs');
    expect(rectTip(tl, 1, 1)).toBe('ampere_sgemm\n1.50 ms (3 events merged)');
    expect(rectTip(tl, 0, 0)).toBe('data\n4.00 ms');
  });
});

describe('timeline panel', () => {
  it('states GPU busy and idle causes above the lanes, rectangles and idle gaps', () => {
    const { panel, svg, axis } = mounted();
    expect(panel.querySelector('p')?.textContent).toBe(
      'GPU busy 40.0% of the profiled window; 4.00 ms busy per step; idle per real step by cause: input 5.00 ms.'
    );
    expect(Array.from(svg.querySelectorAll('.gpuprof-w-lane')).map(t => t.textContent)).toEqual([
      'CPU ranges (phases, data)',
      'GPU 0 stream 7'
    ]);
    expect(svg.querySelectorAll('rect[data-lane]')).toHaveLength(3);
    expect(svg.querySelector('rect.gpuprof-w-gap')?.getAttribute('fill')).toBe('#e67e22');
    expect(axis()[0]).toBe('0.000 ms');
    expect(axis()[5]).toBe('10.00 ms');
    expect(panel.querySelector('.gpuprof-w-hint')?.textContent).toContain(
      '5 events as 3 rectangles'
    );
  });

  it('zooms in with the wheel, pans by dragging and resets on double-click', () => {
    const { svg, axis, fire } = mounted();
    // pointer at the plot's left edge (x=170): zooming keeps 0 ms there
    fire('wheel', { clientX: 170, deltaY: -1 });
    expect(axis()[5]).toBe('8.000 ms');
    expect(svg.querySelectorAll('rect[data-lane]')).toHaveLength(3);
    fire('wheel', { clientX: 170, deltaY: -1 });
    fire('wheel', { clientX: 170, deltaY: -1 });
    fire('wheel', { clientX: 170, deltaY: -1 });
    expect(axis()[5]).toBe('4.096 ms');
    expect(svg.querySelectorAll('rect[data-lane]')).toHaveLength(1); // GPU kernels now off-screen
    fire('mousedown', { clientX: 500 });
    fire('mousemove', { clientX: 400 }); // drag left: later times come into view
    window.dispatchEvent(new MouseEvent('mouseup'));
    expect(Number(axis()[0]?.split(' ')[0])).toBeGreaterThan(0);
    const panned = axis();
    fire('mousemove', { clientX: 100 }); // no longer dragging: nothing moves
    expect(axis()).toEqual(panned);
    fire('dblclick', {});
    expect(axis()[0]).toBe('0.000 ms');
    expect(axis()[5]).toBe('10.00 ms');
  });

  it('shows a tooltip over rectangles and gaps and hides it elsewhere', () => {
    const { panel, svg, fire } = mounted();
    const tip = panel.querySelector('.gpuprof-w-tip') as HTMLElement;
    const kernel = svg.querySelector('rect[data-lane="1"][data-i="0"]') as SVGRectElement;
    fire('mousemove', { clientX: 300, clientY: 40 }, kernel);
    expect(tip.style.display).toBe('block');
    expect(tip.textContent).toBe('ampere_sgemm\nop: aten::mm\nshapes: [[4, 4]]\n500.0 µs');
    expect(tip.style.left).toBe('312px');
    fire('mousemove', { clientX: 200 }, svg.querySelector('rect.gpuprof-w-gap') as Element);
    expect(tip.textContent).toBe('GPU idle 5.00 ms: input');
    fire('mousemove', { clientX: 10 });
    expect(tip.style.display).toBe('none');
    fire('mousemove', { clientX: 300 }, kernel);
    svg.dispatchEvent(new MouseEvent('mouseleave'));
    expect(tip.style.display).toBe('none');
  });

  it('explains a missing timeline, pointing multi-rank runs at one trace', () => {
    const sm = sampleSummary();
    sm.timeline = null;
    sm.ranks = [{ rank: 0 }, { rank: 1 }];
    expect(timelinePanel(sm, {}).querySelector('.gpuprof-w-empty')?.textContent).toBe(
      "No timeline: the trace holds no events in the profiled window (multi-rank runs: open one rank's trace)."
    );
  });
});
