import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import * as path from 'path';

/**
 * The report as a performance engineer uses it, on a real H200 trace, in both themes: zoom to
 * about 1 ms shows kernels by name, a plain wheel scrolls the notebook, GPU busy reads the same
 * in the head and the timeline. The committed trace with the most kernels per step is
 * tinygpt_before (about 440 per step); no committed trace reaches 1,000 (the jest suite covers
 * 1,200 kernels per step with a synthetic summary).
 */
const TRACE = path.resolve(__dirname, '..', '..', 'tests', 'data', 'real', 'tinygpt_before');

/** A notebook with tall output above the report (so the notebook scrolls) and the report. */
async function openReport(page: IJupyterLabPageFixture, name: string) {
  await page.notebook.createNew(name);
  await page.notebook.setCell(0, 'code', "print('\\n'.join(map(str, range(60))))");
  await page.notebook.runCell(0, true);
  await page.notebook.addCell(
    'code',
    [
      'from jupyter_gpuprof.report import analyze_path',
      'from jupyter_gpuprof.views.widget import ReportWidget',
      `s = analyze_path(${JSON.stringify(TRACE)}).to_json()`,
      "s['source']['path'] = 'tests/data/real/tinygpt_before'",
      'ReportWidget(s)'
    ].join('\n')
  );
  await page.notebook.runCell(1, true);
  const widget = page.locator('.jp-OutputArea-output .gpuprof-w');
  await expect(widget).toHaveCount(1, { timeout: 120_000 });
  return widget;
}

for (const theme of ['light', 'dark']) {
  test(`timeline on a real trace, ${theme} theme: kernels by name at 1 ms, wheel scrolls the page`, async ({
    page
  }) => {
    test.setTimeout(240_000);
    if (theme === 'dark') {
      await page.theme.setDarkTheme();
    } else {
      await page.theme.setLightTheme();
    }
    const widget = await openReport(page, `timeline_${theme}.ipynb`);
    const head = (await widget.locator('.gpuprof-w-busy-head').textContent()) ?? '';
    expect(head).toMatch(/^GPU busy \d+ % real \/ \d+ % under profiler$/);

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

    // W zooms (Perfetto's key) until the axis reads in µs: a window under 2 ms
    await svg.scrollIntoViewIfNeeded();
    await svg.focus();
    for (let i = 0; i < 30 && !(await axis()).includes('µs'); i++) {
      await page.keyboard.press('w');
    }
    expect(await axis()).toContain('µs');
    await expect(timeline.locator('.gpuprof-w-name').first()).toBeVisible();
    const names = await timeline.locator('.gpuprof-w-name').allTextContents();
    expect(names.some(n => n.length > 3 && !/^\d+ events$/.test(n))).toBe(true);
    await page.mouse.move(0, 0);
    await widget.screenshot({ path: test.info().outputPath(`timeline-1ms-${theme}.png`) });

    // a click on a step band zooms to that step, its axis counted from the step start
    await page.dblclick('svg.gpuprof-w-tl');
    await timeline.locator('rect.gpuprof-w-step').first().click();
    await expect(timeline.locator('.gpuprof-w-axis-title')).toContainText('from the start of step');
    await widget.screenshot({ path: test.info().outputPath(`timeline-step-${theme}.png`) });
  });
}
