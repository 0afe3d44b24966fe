import { expect, test } from '@jupyterlab/galata';
import * as path from 'path';

const NOTEBOOK = 'quickstart.ipynb';
const SOURCE = path.resolve(__dirname, '..', '..', 'notebooks', NOTEBOOK);

test('the quickstart notebook profiles on CPU and shows the report', async ({ page, tmpPath }) => {
  // Imports torch and profiles two captures on CPU: well over galata's 60 s default on 2 cores.
  test.setTimeout(300_000);
  await page.contents.uploadFile(SOURCE, `${tmpPath}/${NOTEBOOK}`);
  // openByPath needs the file browser in front.
  await page.sidebar.openTab('filebrowser');
  await page.notebook.openByPath(`${tmpPath}/${NOTEBOOK}`);
  await page.notebook.activate(NOTEBOOK);
  await page.notebook.run();

  const outputs = page.locator('.jp-NotebookPanel .jp-OutputArea-output');
  const banner = outputs.filter({ hasText: 'GPU metrics unavailable' }).filter({ visible: true });
  await expect(banner.first()).toBeVisible({ timeout: 120_000 });
  // The first output: the bundled H200 run's verdict, its fix and what it is worth.
  await expect(outputs.first()).toContainText('Verdict: precision', { timeout: 120_000 });
  await expect(outputs.first()).toContainText('Top fix:');
  // The reports (the H200 example, the step, the loop and the try): step statistics, then the
  // verdict. Each is displayed twice, the static copy (for viewers without a kernel) and the
  // widget, which hides the copy once drawn.
  const report = outputs.filter({ hasText: /Step time.*median/ }).filter({ visible: true });
  await expect(page.locator('.jp-NotebookPanel .gpuprof-w')).toHaveCount(4, { timeout: 240_000 });
  await expect(report).toHaveCount(4, { timeout: 120_000 });
  await expect(report.first()).toContainText('p95');
  await expect(outputs.filter({ hasText: 'Fixes tried' }).first()).toBeVisible();
  // JupyterLab renders a cell's exception as stderr text: no cell may have raised.
  await expect(outputs.filter({ hasText: 'Traceback' })).toHaveCount(0);

  await report.first().scrollIntoViewIfNeeded();
  await page.screenshot({ path: test.info().outputPath('quickstart-report.png') });
});
