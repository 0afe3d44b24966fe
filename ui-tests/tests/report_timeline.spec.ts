import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

import { openReport, setTheme } from './reportCell';

/**
 * The report as a performance engineer uses it, on a real H200 trace, in both themes: zoom to
 * about 1 ms shows kernels by name, a plain wheel scrolls the notebook, GPU busy reads the same
 * in the head and the timeline.
 */
interface ITimelineTrace {
  /** A committed run folder (trace + meta), relative to the repository. */
  dir: string;
  /** The fewest kernels per step the trace must hold, so the zoom test means what it says. */
  minKernelsPerStep: number;
}

/**
 * The trace the spec runs on: a Llama-style bf16 step on the H200, over 1,000 kernels per step
 * (the bar). GPUPROF_TIMELINE_TRACE (a run folder relative to the repository, e.g.
 * tests/data/real/tinygpt_before, about 440 kernels per step) overrides it for one run.
 */
const TRACE: ITimelineTrace = process.env.GPUPROF_TIMELINE_TRACE
  ? { dir: process.env.GPUPROF_TIMELINE_TRACE, minKernelsPerStep: 1 }
  : { dir: 'tests/data/real/llama_bf16', minKernelsPerStep: 1000 };

for (const theme of ['light', 'dark']) {
  test(`timeline on ${TRACE.dir}, ${theme} theme: kernels by name at 1 ms, wheel scrolls the page`, async ({
    page
  }) => {
    test.setTimeout(240_000);
    // the width of a notebook on a laptop screen, the file browser closed: the chart's width
    // decides how long a kernel must be for its name to fit
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.sidebar.close('left');
    await setTheme(page, theme);
    const { widget, kernelsPerStep } = await openReport(
      page,
      `timeline_${theme}.ipynb`,
      TRACE.dir
    );
    test.info().annotations.push({ type: 'kernels per step', description: String(kernelsPerStep) });
    expect(kernelsPerStep).toBeGreaterThanOrEqual(TRACE.minKernelsPerStep);
    const head = (await widget.locator('.gpuprof-w-busy-head').textContent()) ?? '';
    expect(head).toMatch(/^GPU busy \d+% real \/ \d+% under profiler$/);

    await widget.getByRole('tab', { name: 'GPU timeline' }).click();
    const timeline = widget.locator('.gpuprof-w-panel-timeline');
    // the same GPU busy wording, word for word, in the timeline
    await expect(timeline.locator('.gpuprof-w-busy')).toContainText(head);
    const svg = timeline.locator('svg.gpuprof-w-tl');
    await svg.scrollIntoViewIfNeeded();
    const axis = async () =>
      (await timeline.locator('.gpuprof-w-axis').allTextContents()).join('|');

    // a plain wheel over the chart scrolls the notebook and leaves the view alone
    const scroller = page.locator('.jp-NotebookPanel .jp-WindowedPanel-outer').first();
    const before = await axis();
    const top = await scroller.evaluate(el => el.scrollTop);
    await svg.hover();
    await page.mouse.wheel(0, -200);
    await expect.poll(() => scroller.evaluate(el => el.scrollTop)).not.toBe(top);
    expect(await axis()).toBe(before);

    // into a step whose every event the report carries (the summary inlines the typical ones;
    // the others load from a run's server, which this notebook has not), then W (Perfetto's
    // key, 0.6 of the window a press) until the window is 1 ms or less
    await svg.scrollIntoViewIfNeeded();
    await timeline.locator('rect.gpuprof-w-step[data-events="all"]').first().click();
    await svg.focus();
    const windowUs = async () => Number(await svg.getAttribute('data-view-us'));
    for (let i = 0; i < 40 && (await windowUs()) > 1000; i++) {
      await page.keyboard.press('w');
    }
    const shownUs = await windowUs();
    expect(shownUs).toBeLessThanOrEqual(1000);
    expect(shownUs).toBeGreaterThan(500);
    test.info().annotations.push({ type: 'window µs', description: String(shownUs) });
    // ticks in ms with the decimals a 1 ms window needs (µs only near the step start), never
    // a five-digit "40200 µs"
    expect(await axis()).toMatch(/\d (ms|µs)/);
    expect(await axis()).not.toMatch(/\d{5} µs/);
    // the GPU lane itself names kernels (not only the CPU lanes their ops)
    const lanes = await timeline.locator('.gpuprof-w-lane').allTextContents();
    const gpuLane = lanes.findIndex(l => /stream/.test(l));
    expect(gpuLane).toBeGreaterThanOrEqual(0);
    const gpuNames = timeline.locator(`.gpuprof-w-name[data-lane="${gpuLane}"]`);
    await expect(gpuNames.first()).toBeVisible();
    const names = await gpuNames.allTextContents();
    expect(names.filter(n => n.length > 3 && !/^\d+ events$/.test(n)).length).toBeGreaterThan(0);
    await page.mouse.move(0, 0);
    expect(await widget.screenshot()).toMatchSnapshot(
      `timeline-1ms-${path.basename(TRACE.dir)}-${theme}.png`
    );

    // a click on a step band zooms to that step, its axis counted from the step start
    await page.dblclick('svg.gpuprof-w-tl');
    await timeline.locator('rect.gpuprof-w-step').first().click();
    await expect(timeline.locator('.gpuprof-w-axis-title')).toContainText('from the start of step');
    await widget.screenshot({ path: test.info().outputPath(`timeline-step-${theme}.png`) });
  });
}
