import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import { setTheme } from './reportCell';
import { BEFORE, openCompare, openPanel, RUNS_DIR } from './runBrowser';

/**
 * One run, one reading of each quantity: the step median, the profiled median, the step
 * numbering, calls per step, the two shares and their units read the same on the sidebar row,
 * the header, every tab, the compare view and the exported HTML (a real H200 run, tinygpt).
 */
const MS = '(\\d[\\d,]*\\.\\d\\d ms|\\d[\\d.]* µs)';

/** The first match of `re` (group 1) in `locator`'s text; fails the test when there is none. */
async function grab(locator: Locator, re: RegExp): Promise<string> {
  const text = (await locator.first().textContent()) ?? '';
  const found = re.exec(text);
  expect(found, `${re} in "${text}"`).not.toBeNull();
  return found![1];
}

/** The median of formatted durations ("12.30 ms"), as a number of ms. */
function medianOf(values: string[]): number {
  const v = values.map(x => Number.parseFloat(x.replace(/,/g, ''))).sort((a, b) => a - b);
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** Every column header of the table in `panel`. */
async function heads(panel: Locator, table: string): Promise<string[]> {
  return (await panel.locator(`table.${table} th`).allTextContents()).map(t =>
    t.replace(/ [▲▼]$/, '')
  );
}

for (const theme of ['light', 'dark']) {
  test(`one run reads the same on the sidebar, every tab, compare and export, ${theme}`, async ({
    page
  }) => {
    test.setTimeout(300_000);
    await setTheme(page, theme);
    const panel = await openPanel(page);

    // the sidebar row
    const row = panel.locator(`li[data-run-id="${BEFORE}"]`);
    const median = await grab(row.locator('.jp-gpuprof-run-steps'), new RegExp(`median ${MS}`));

    // the header
    await row.locator('.jp-gpuprof-run-name').click();
    const report = page.locator(
      `#jupyter-gpuprof-run-${BEFORE} .jp-gpuprof-detail-body .gpuprof-w`
    );
    await expect(report.locator('.gpuprof-w-head .gpuprof-w-verdict')).toBeVisible({
      timeout: 60_000
    });
    expect(await grab(report.locator('.gpuprof-w-head .gpuprof-w-stats'), /median (\S+ ms)/)).toBe(
      median
    );

    // Step time: the same median; the profiled median is the median of the dots drawn
    const steps = report.locator('.gpuprof-w-panel-steps');
    expect(await grab(steps.locator('.gpuprof-w-stepstats'), /Baseline median (\S+ ms)/)).toBe(
      median
    );
    const profiled = await grab(steps.locator('.gpuprof-w-profiled'), /median (\S+ ms) =/);
    const dots = await steps.locator('.gpuprof-w-series-profiled circle title').allTextContents();
    expect(dots.length).toBeGreaterThan(1);
    const numbered = dots.map(d => /^profiled step (\d+): (\S+ ms)/.exec(d));
    expect(numbered.map(m => Number(m?.[1]))).toEqual(dots.map((_, i) => i + 1));
    const chartTimes = numbered.map(m => m![2]);
    expect(medianOf(chartTimes)).toBeCloseTo(Number.parseFloat(profiled), 1);
    expect(await grab(steps.locator('.gpuprof-w-series-profiled'), /median (\S+ ms)/)).toBe(
      profiled
    );

    // GPU timeline: the step bands are the same steps, numbered 1..n, with the same times
    await report.getByRole('tab', { name: 'GPU timeline' }).click();
    const bands = report.locator('.gpuprof-w-panel-timeline rect.gpuprof-w-step');
    await expect(bands.first()).toBeAttached();
    const tips: string[] = [];
    for (let i = 0; i < (await bands.count()); i++) {
      await bands.nth(i).dispatchEvent('mousemove', { clientX: 300, clientY: 100 });
      tips.push((await report.locator('.gpuprof-w-tip').textContent()) ?? '');
    }
    const read = tips.map(t => /^step (\d+): (\S+ ms)/.exec(t));
    expect(read.map(m => Number(m?.[1]))).toEqual(dots.map((_, i) => i + 1));
    expect(read.map(m => m?.[2])).toEqual(chartTimes);

    // Operators and Kernels: calls per step, both shares, named alike
    await report.getByRole('tab', { name: 'Operators' }).click();
    const ops = report.locator('.gpuprof-w-panel-ops');
    const opHeads = await heads(ops, 'gpuprof-w-ops');
    expect(opHeads).toEqual(expect.arrayContaining(['calls/step', '% of GPU time', '% of step']));
    const opCells = await ops.locator('table.gpuprof-w-ops tbody tr').first().locator('td').all();
    const cell = async (label: string) =>
      (await opCells[opHeads.indexOf(label)].textContent()) ?? '';
    expect(await cell('calls/step')).toMatch(/^\d[\d,]*(\.\d)?$/);
    expect(await cell('% of GPU time')).toMatch(/^\d+\.\d%$/);
    expect(await cell('% of step')).toMatch(/^\d+\.\d%$/);
    // every shape of the op with its calls per step, and the kernels it launched
    await ops.locator('tbody tr').first().locator('details summary').first().click();
    await expect(ops.locator('tbody tr').first().locator('details[open]')).toHaveCount(1);
    await page.mouse.move(0, 0);
    expect(await ops.screenshot()).toMatchSnapshot(`one-number-ops-${theme}.png`);

    await report.getByRole('tab', { name: 'Kernels' }).click();
    const kernels = report.locator('.gpuprof-w-panel-kernels');
    const kHeads = await heads(kernels, 'gpuprof-w-kernels');
    expect(kHeads).toEqual(
      expect.arrayContaining(['calls/step', '% of GPU time', '% of step', 'Tensor Cores'])
    );
    const label = (await kernels.locator('.gpuprof-w-kernel-count').textContent()) ?? '';
    const counted = /^(\d+) of (\d+) kernels, covering (\d+\.\d)% of GPU time$/.exec(label);
    expect(counted, label).not.toBeNull();
    expect(Number(counted![1])).toBe(Number(counted![2])); // every kernel, not a top 15
    await expect(kernels.locator('tbody tr')).toHaveCount(Number(counted![1]));
    // the last column is reachable: the table scrolls sideways instead of cutting it off
    const lastHead = kernels.locator('table.gpuprof-w-kernels th').last();
    await lastHead.scrollIntoViewIfNeeded();
    await expect(lastHead).toBeInViewport();
    await kernels.locator('table.gpuprof-w-kernels').evaluate(t => t.scrollTo(0, 0));
    await page.mouse.move(0, 0);
    expect(await kernels.screenshot()).toMatchSnapshot(`one-number-kernels-${theme}.png`);

    // Next steps: the finding's cost and gain in one line, of the same step
    await report.getByRole('tab', { name: 'Next steps' }).click();
    const costLine =
      (await report
        .locator('.gpuprof-w-findings > li .gpuprof-w-costline')
        .first()
        .textContent()) ?? '';
    expect(costLine).toMatch(new RegExp(`^costs ${MS} of the ${MS} step; `));
    expect(new RegExp(`of the ${MS} step`).exec(costLine)?.[1]).toBe(median);
    expect(costLine).toMatch(/gain ≈\d+%$/);

    // the compare view states the same median for this run
    const { view } = await openCompare(page, panel);
    expect(await grab(view.locator('.jp-gpuprof-change-line'), new RegExp(`^Median ${MS} →`))).toBe(
      median
    );
    await panel.getByRole('checkbox', { name: 'Pick tinygpt before for comparison' }).uncheck();
    await panel.getByRole('checkbox', { name: 'Pick tinygpt after for comparison' }).uncheck();

    // the export, opened as a reader would open the file
    const out = `one_number_${theme}.html`;
    await page.notebook.createNew(`one_number_export_${theme}.ipynb`);
    await page.notebook.setCell(
      0,
      'code',
      [
        'import os, subprocess, sys',
        "root = os.path.dirname(os.environ['JUPYTER_GPUPROF_RUNS'])  # the server's root_dir",
        `run = os.path.join(root, '${RUNS_DIR}', '${BEFORE}')`,
        `out = os.path.join(root, '${out}')`,
        "subprocess.run([sys.executable, '-m', 'jupyter_gpuprof', 'export', run, '--html', out], check=True)",
        "print('exported')"
      ].join('\n')
    );
    await page.notebook.runCell(0, true);
    await expect(page.locator('.jp-OutputArea-output', { hasText: 'exported' })).toHaveCount(1, {
      timeout: 120_000
    });
    const exported = await page.context().newPage();
    await exported.goto(`files/${out}`);
    const body = (await exported.locator('body').textContent()) ?? '';
    expect(body, `the export at ${exported.url()}`).toContain('Step time');
    expect(new RegExp(`median ${MS}, p95`).exec(body)?.[1]).toBe(median);
    expect(/Profiled steps: median (\S+ ms)/.exec(body)?.[1]).toBe(profiled);
    expect(body).toContain(costLine);
    expect(body).toContain(`the report holds ${label}`);
    const exportHeads = await exported.locator('th').allTextContents();
    expect(exportHeads).toEqual(
      expect.arrayContaining(['calls/step', '% of GPU time', '% of step'])
    );
    await exported.close();
  });
}
