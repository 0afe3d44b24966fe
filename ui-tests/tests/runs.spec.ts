import { expect, test } from '@jupyterlab/galata';

import { BEFORE, openCompare, openPanel, RUNS_DIR } from './runBrowser';

test.describe('GPU Profiler run browser', () => {
  test('lists the fixture runs with step times, badges and states', async ({ page }) => {
    const panel = await openPanel(page);
    const runs = panel.getByRole('list', { name: 'Saved GPU profiling runs' });
    const rows = runs.locator('li.jp-gpuprof-run');
    await expect(rows.locator('.jp-gpuprof-run-name')).toHaveText([
      'tinygpt after',
      'tinygpt before',
      '20261129-191500-corrupt',
      'still-capturing',
      'mlp-fixture'
    ]);
    const before = runs.locator(`li[data-run-id="${BEFORE}"]`);
    await expect(before.locator('.jp-gpuprof-run-gpu')).toHaveText('NVIDIA H200');
    await expect(before.locator('.jp-gpuprof-run-steps')).toHaveText(
      'median 46.52 ms · p95 47.37 ms'
    );
    await expect(before.locator('.jp-gpuprof-tag')).toHaveText(['baseline']);
    await expect(
      runs.locator('li[data-run-id="20261129-191400-running"] .jp-gpuprof-run-status')
    ).toHaveText('in progress');
    await expect(
      runs.locator('li[data-run-id="20261129-191500-corrupt"] .jp-gpuprof-run-status')
    ).toHaveText('broken');
    // Before any run is analysed (the other tests open and compare runs afterwards).
    expect(await runs.screenshot()).toMatchSnapshot('runs-list.png');

    // Search and tag filter narrow the list on the server.
    await panel.getByRole('searchbox', { name: 'Search runs' }).fill('tinygpt');
    await expect(rows).toHaveCount(2);
    await panel.getByRole('combobox', { name: 'Filter by tag' }).selectOption('fix');
    await expect(rows.locator('.jp-gpuprof-run-name')).toHaveText(['tinygpt after']);
    await panel.getByRole('combobox', { name: 'Filter by tag' }).selectOption('');
    await panel.getByRole('searchbox', { name: 'Search runs' }).fill('');
    await expect(rows).toHaveCount(5);
  });

  test('opens a run: the report panels from its summary, no kernel', async ({ page }) => {
    const panel = await openPanel(page);
    await panel.locator(`li[data-run-id="${BEFORE}"] .jp-gpuprof-run-name`).click();
    const detail = page.locator(`#jupyter-gpuprof-run-${BEFORE}`);
    await expect(detail.locator('.jp-gpuprof-detail-title')).toHaveText('tinygpt before');
    // The first open analyses the real trace on the server, then caches summary.json.
    const report = detail.locator('.jp-gpuprof-detail-body .gpuprof-w');
    // tinygpt_before: 23 of its 32 ms of GPU work are fp32 SIMT GEMMs, bf16 is the first fix
    await expect(report.locator('.gpuprof-w-head .gpuprof-w-verdict')).toContainText(
      'Verdict: precision',
      { timeout: 30_000 }
    );
    // The same panels as the notebook widget, with their interactions.
    await expect(report.locator('.gpuprof-w-tab')).toHaveText([
      'Step time',
      'GPU timeline',
      'Operators',
      'Kernels',
      'Transfers & syncs',
      'Next steps'
    ]);
    await expect(report.locator('.gpuprof-w-panel-steps')).toContainText('Baseline median');
    await report.getByRole('tab', { name: 'GPU timeline' }).click();
    await expect(report.locator('.gpuprof-w-panel-timeline svg.gpuprof-w-tl')).toBeVisible();
    expect(await report.locator('svg.gpuprof-w-tl rect').count()).toBeGreaterThan(10);
    await report.getByRole('tab', { name: 'Operators' }).click();
    const firstOp = report.locator('.gpuprof-w-panel-ops tbody tr').first().locator('td').first();
    await report.locator('.gpuprof-w-panel-ops input.gpuprof-w-filter').fill('aten::');
    await expect(firstOp).toContainText('aten::');
    await report.getByRole('tab', { name: 'Next steps' }).click();
    await expect(
      report.locator('.gpuprof-w-panel-next .gpuprof-w-findings li').first()
    ).toBeVisible();
    await expect(page.locator('.jp-NotebookPanel')).toHaveCount(0);
    await page.screenshot({ path: test.info().outputPath('run-detail.png') });
    // Once analysed, the list shows the verdict badge.
    await panel.getByRole('button', { name: 'Refresh the run list' }).click();
    await expect(panel.locator(`li[data-run-id="${BEFORE}"] .jp-gpuprof-badge`)).toHaveText(
      'precision'
    );

    await detail.getByRole('button', { name: 'Show code' }).click();
    const dialog = page.locator('.jp-Dialog');
    await expect(dialog.locator('.jp-gpuprof-code')).toContainText('train_step(batch)');
    await dialog.getByRole('button', { name: 'Close' }).click();

    // One Download trace in the run's view: the report toolbar's (the header had its own).
    const downloadButton = detail.getByRole('button', { name: 'Download trace', exact: true });
    await expect(downloadButton).toHaveCount(1);
    await expect(downloadButton).toHaveClass(/gpuprof-w-toolbtn/);
    await page.mouse.move(0, 0);
    expect(await detail.locator('.jp-gpuprof-detail-header').screenshot()).toMatchSnapshot(
      'run-detail-header.png'
    );
    const download = page.waitForEvent('download');
    await downloadButton.click();
    expect((await download).suggestedFilename()).toBe(`${BEFORE}.trace.json.gz`);
  });

  test('compares before and after: the fix is significant', async ({ page }) => {
    const { view } = await openCompare(page);
    await expect(view.locator('.jp-gpuprof-change-line')).toContainText(
      'Median 46.52 ms → 18.36 ms: −28.16 ms (−60.5%), 95% CI'
    );
    await expect(view.locator('svg.jp-gpuprof-dist rect').first()).toBeVisible();
    await expect(view.locator('.jp-gpuprof-verdict-card h4')).toHaveText([
      'Before: tinygpt before',
      'After: tinygpt after'
    ]);
    await expect(view.locator('.jp-gpuprof-deltas').first()).toContainText('gemm');
    // what the before run predicted for what the fix resolved, beside what it measured
    await expect(view.locator('.jp-gpuprof-prediction')).toContainText(
      /Predicted by the before run: \[precision\] ≈\d+%.*measured here: gain \+60\.5%/
    );
    expect(await view.screenshot()).toMatchSnapshot('compare-tinygpt.png');
  });

  test('deletes a run after confirming', async ({ page }) => {
    const runId = `20261129-180000-scratch${Date.now()}`;
    const meta = {
      schema_version: 1,
      id: runId,
      name: 'scratch run',
      status: 'complete',
      created: '2026-11-29T18:00:00+00:00'
    };
    await page.contents.uploadContent(
      JSON.stringify(meta),
      'text',
      `${RUNS_DIR}/${runId}/meta.json`
    );
    const panel = await openPanel(page);
    // A run that lands while the panel is open shows up on refresh.
    await panel.getByRole('button', { name: 'Refresh the run list' }).click();
    const row = panel.locator(`li[data-run-id="${runId}"]`);
    await expect(row).toBeVisible();
    await row.locator('.jp-gpuprof-run-name').click();
    const detail = page.locator(`#jupyter-gpuprof-run-${runId}`);
    await detail.getByRole('button', { name: 'Delete' }).click();

    const dialog = page.locator('.jp-Dialog');
    await expect(dialog).toContainText('cannot be undone');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(row).toBeVisible();

    await detail.getByRole('button', { name: 'Delete' }).click();
    await page.locator('.jp-Dialog').getByRole('button', { name: 'Delete' }).click();
    await expect(row).toHaveCount(0);
    await expect(detail).toHaveCount(0);
    expect(await page.contents.directoryExists(`${RUNS_DIR}/${runId}`)).toBe(false);
  });
});
