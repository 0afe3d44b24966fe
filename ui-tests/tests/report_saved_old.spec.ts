import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import * as path from 'path';

import { REPO, setTheme } from './reportCell';

/**
 * A notebook executed with an older widget build (fixtures/old_widget_report.ipynb: a report of
 * the quickstart as committed then, its widget's code of that day saved in the notebook). With
 * this extension installed the report draws with the extension's current code from the saved
 * summary, never with the saved copy; untrusted, the static copy shows and no widget code runs.
 */
const FIXTURE = path.join(REPO, 'ui-tests', 'fixtures', 'old_widget_report.ipynb');

async function openOld(page: IJupyterLabPageFixture, tmpPath: string, name: string): Promise<void> {
  await page.contents.uploadFile(FIXTURE, `${tmpPath}/${name}`);
  await page.sidebar.openTab('filebrowser');
  await page.notebook.openByPath(`${tmpPath}/${name}`);
  await page.notebook.activate(name);
}

for (const theme of ['light', 'dark']) {
  test(`an old executed notebook shows the current report once trusted, ${theme} theme`, async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(180_000);
    await page.setViewportSize({ width: 1280, height: 1400 });
    await setTheme(page, theme);
    const name = `old_report_${theme}.ipynb`;
    await openOld(page, tmpPath, name);
    // trusting re-renders every output: the widget view is drawn then
    void page.evaluate(() => window.jupyterapp.commands.execute('notebook:trust'));
    await page.getByRole('dialog').getByRole('button', { name: /Trust/ }).click();

    const drawn = page.locator('.jp-OutputArea-output[data-gpuprof-report="extension"]');
    await expect(drawn).toHaveCount(1, { timeout: 60_000 });
    // one report in the notebook, the extension's: the saved copy of the widget code never ran
    await expect(page.locator('.jp-NotebookPanel .gpuprof-w')).toHaveCount(1);
    const report = drawn.locator('.gpuprof-w');
    await expect(report.getByText('Verdict: precision', { exact: false }).first()).toBeAttached();
    // today's tab strip, wired for assistive technology
    const tabs = report.getByRole('tab');
    await expect(tabs).toHaveCount(6);
    await expect(report.getByRole('tab', { name: 'Step time' })).toHaveAttribute(
      'aria-selected',
      'true'
    );
    await report.getByRole('tab', { name: 'Next steps' }).click();
    const next = report.getByRole('tabpanel', { name: 'Next steps' });
    await expect(next).toBeVisible();
    await expect(next.getByText('Verdict: precision')).toBeVisible();
    await expect(next.getByRole('button', { name: /^Copy fix for / }).first()).toBeVisible();
    // the static copy above is hidden once the report draws
    await expect(page.locator('.jp-NotebookPanel .gpuprof-static')).toBeHidden();

    // assistive technology: the keyboard walks the tabs, each chart has its numbers as a table,
    // every table has a caption
    await report.getByRole('tab', { name: 'Next steps' }).press('Home');
    await expect(report.getByRole('tab', { name: 'Step time' })).toBeFocused();
    await report.getByRole('tab', { name: 'Step time' }).press('ArrowRight');
    await expect(report.getByRole('tabpanel', { name: 'GPU timeline' })).toBeVisible();
    await report.getByRole('tab', { name: 'GPU timeline' }).press('ArrowLeft');
    const steps = report.getByRole('tabpanel', { name: 'Step time' });
    await expect(steps).toBeVisible();
    const chart = steps.locator('[data-chart]'); // the chart, not its focusable points
    const details = await chart.getAttribute('aria-details');
    expect(details).toBeTruthy();
    await steps.getByText('Step times as a table').click();
    const data = page.locator(`#${details} table`);
    await expect(data).toBeVisible();
    await expect(data.locator('caption')).toContainText('Step time of each plotted step');
    expect(await data.locator('tbody tr').count()).toBe(35); // 30 baseline + 5 profiled steps
    const tables = report.locator('table');
    expect(await tables.count()).toBeGreaterThan(2);
    expect(await report.locator('table > caption').count()).toBe(await tables.count());
    await steps.getByText('Step times as a table').click();

    await page.mouse.move(0, 0);
    expect(await report.screenshot()).toMatchSnapshot(`saved-old-report-${theme}.png`);
  });
}

test('an old executed notebook, untrusted, shows its static copy and runs no widget code', async ({
  page,
  tmpPath
}) => {
  test.setTimeout(120_000);
  await openOld(page, tmpPath, 'old_report_untrusted.ipynb');
  const staticCopy = page.locator('.jp-OutputArea-output .gpuprof-static');
  await expect(staticCopy).toBeVisible();
  await expect(staticCopy).toContainText('Verdict');
  await expect(page.locator('.jp-NotebookPanel .gpuprof-w')).toHaveCount(0);
  await expect(page.locator('[data-gpuprof-report="extension"]')).toHaveCount(0);
});
