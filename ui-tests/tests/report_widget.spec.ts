import { expect, test } from '@jupyterlab/galata';
import * as fs from 'fs';
import * as path from 'path';

const NOTEBOOK = 'walkthrough.ipynb';
const SOURCE = path.resolve(__dirname, '..', '..', 'notebooks', NOTEBOOK);
const PANELS = [
  'Step time',
  'GPU timeline',
  'Operators',
  'Kernels',
  'Transfers & syncs',
  'Next steps'
];

test.describe('inline report widget', () => {
  test('the walkthrough renders report widgets with their panels; the op table sorts', async ({
    page,
    tmpPath
  }) => {
    // Three CPU captures with a DataLoader: well over galata's 60 s default on 2 cores.
    test.setTimeout(400_000);
    await page.contents.uploadFile(SOURCE, `${tmpPath}/${NOTEBOOK}`);
    await page.sidebar.openTab('filebrowser');
    await page.notebook.openByPath(`${tmpPath}/${NOTEBOOK}`);
    await page.notebook.activate(NOTEBOOK);
    await page.notebook.run();

    const widgets = page.locator('.jp-OutputArea-output .gpuprof-w');
    await expect(widgets).toHaveCount(3, { timeout: 300_000 });
    await expect(page.locator('[data-mime-type="application/vnd.jupyter.error"]')).toHaveCount(0);
    const first = widgets.first();
    await first.scrollIntoViewIfNeeded();
    await expect(first.locator('.gpuprof-w-tab')).toHaveText(PANELS);
    await expect(first.locator('.gpuprof-w-stats')).toContainText(/median .* p95/);
    await expect(first.locator('.gpuprof-w-banner').first()).toContainText(
      'GPU metrics unavailable'
    );
    // The static copy (its own output, for kernel-less viewers) hides once its widget draws.
    const statics = page.locator('.jp-OutputArea-output .gpuprof-static');
    await expect(statics).toHaveCount(3);
    for (const copy of await statics.all()) {
      await expect(copy).toBeHidden();
    }

    // Step time: one panel per series, each with its median.
    await expect(first.locator('.gpuprof-w-panel-steps svg')).toContainText('median');

    // GPU timeline: lanes drawn as rectangles, the data pipeline among the CPU ranges.
    await first.getByRole('tab', { name: 'GPU timeline' }).click();
    const timeline = first.locator('.gpuprof-w-panel-timeline');
    expect(await timeline.locator('.gpuprof-w-lane').count()).toBeGreaterThan(0);
    // a small CPU trace: a few aggregated bars, split into events on zoom
    expect(await timeline.locator('svg.gpuprof-w-tl rect').count()).toBeGreaterThan(3);
    // Zoom with Ctrl + wheel (a plain wheel scrolls the notebook): the view spans less time
    // (its window, not an axis label: a tick can fall on the same round value after a zoom).
    const svg = timeline.locator('svg.gpuprof-w-tl');
    const span = async () => Number(await svg.getAttribute('data-view-us'));
    const before = await span();
    await svg.hover();
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -400);
    await page.keyboard.up('Control');
    await expect.poll(span).toBeLessThan(before);

    // Operators: sortable by any column, filterable by name.
    await first.getByRole('tab', { name: 'Operators' }).click();
    const ops = first.locator('.gpuprof-w-panel-ops');
    const callsHeader = ops.locator('table.gpuprof-w-ops th[data-key="calls"]');
    await callsHeader.click();
    await expect(callsHeader).toHaveClass(/sorted desc/);
    await expect(callsHeader).toHaveAttribute('aria-sort', 'descending');
    const calls = async () =>
      (await ops.locator('tbody tr td:nth-child(2)').allTextContents()).map(Number);
    const desc = await calls();
    expect(desc.length).toBeGreaterThan(3);
    expect(desc).toEqual([...desc].sort((a, b) => b - a));
    await callsHeader.click();
    await expect(callsHeader).toHaveClass(/sorted asc/);
    const asc = await calls();
    expect(asc).toEqual([...asc].sort((a, b) => a - b));
    await ops.locator('input.gpuprof-w-filter').fill('aten::addmm');
    await expect(ops.locator('tbody tr td.n').first()).toContainText('aten::addmm');

    await first.getByRole('tab', { name: 'Next steps' }).click();
    await expect(first.locator('.gpuprof-w-panel-next .gpuprof-w-verdict')).toContainText(
      'Verdict'
    );

    await page.screenshot({ path: test.info().outputPath('report-widget.png') });
  });

  test('a GPU report from a fixed trace matches its screenshots', async ({ page }) => {
    test.setTimeout(180_000);
    const trace = path.resolve(__dirname, '..', '..', 'tests', 'data', 'real', 'input');
    const name = 'fixed_report.ipynb';
    await page.notebook.createNew(name);
    // The path is shown in the title: replace it so the picture is machine-independent.
    await page.notebook.setCell(
      0,
      'code',
      [
        'from jupyter_gpuprof.report import analyze_path',
        'from jupyter_gpuprof.views.widget import ReportWidget',
        `s = analyze_path(${JSON.stringify(trace)}).to_json()`,
        "s['source']['path'] = 'tests/data/real/input'",
        'ReportWidget(s)'
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    const widget = page.locator('.jp-OutputArea-output .gpuprof-w');
    await expect(widget).toHaveCount(1, { timeout: 60_000 });
    await expect(widget.locator('.gpuprof-w-verdict').first()).toContainText('Verdict: input');
    const settle = async () => {
      await page.mouse.move(0, 0);
      await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    };
    await widget.getByRole('tab', { name: 'Operators' }).click();
    await widget.locator('.gpuprof-w-panel-ops table.gpuprof-w-ops th[data-key="calls"]').click();
    await settle();
    expect(await widget.screenshot()).toMatchSnapshot('report-widget-ops-sorted.png');
    await widget.getByRole('tab', { name: 'Next steps' }).click();
    await settle();
    expect(await widget.screenshot()).toMatchSnapshot('report-widget-next-steps.png');
    await widget.getByRole('tab', { name: 'GPU timeline' }).click();
    await settle();
    expect(await widget.screenshot()).toMatchSnapshot('report-widget-timeline.png');
  });

  test('render time of a report (small trace, and the big one when GPUPROF_BIG_TRACE is set)', async ({
    page
  }) => {
    test.setTimeout(300_000);
    const traces: [string, string][] = [
      ['small', path.resolve(__dirname, '..', '..', 'tests', 'data', 'real', 'input')]
    ];
    if (process.env.GPUPROF_BIG_TRACE) {
      traces.push(['big', path.resolve(process.env.GPUPROF_BIG_TRACE)]);
    }
    const name = 'render_timing.ipynb';
    await page.notebook.createNew(name);
    const timings: Record<string, number> = {};
    for (const [label, trace] of traces) {
      await page.notebook.setCell(
        0,
        'code',
        `from jupyter_gpuprof.report import analyze_path\nr = analyze_path(${JSON.stringify(trace)})\ns = r.to_json()`
      );
      await page.notebook.runCell(0);
      await page.notebook.setCell(0, 'code', 'r.widget()');
      const t0 = Date.now();
      await page.notebook.runCell(0, true);
      await expect(page.locator('.jp-OutputArea-output .gpuprof-w .gpuprof-w-stats')).toBeVisible({
        timeout: 120_000
      });
      timings[`${label}_display_ms`] = Date.now() - t0;
      // Front-end only: draw the timeline panel (the heaviest) from the summary already there.
      const t1 = Date.now();
      await page.locator('.gpuprof-w').getByRole('tab', { name: 'GPU timeline' }).click();
      await expect(page.locator('.gpuprof-w-panel-timeline')).toBeVisible();
      timings[`${label}_tab_switch_ms`] = Date.now() - t1;
    }
    fs.writeFileSync(
      test.info().outputPath('render-timing.json'),
      JSON.stringify(timings, null, 1)
    );
    expect(timings['small_display_ms']).toBeLessThan(30_000);
  });
});
