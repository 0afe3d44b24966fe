import { expect, test } from '@jupyterlab/galata';

const FIXTURE_RUN = '20261129-191322-mlp';
const CORRUPT_RUN = '20261129-191500-corrupt';

test.describe('GPU Profiler sidebar', () => {
  test('shows the server status and the fixture runs', async ({ page }) => {
    const tab = page.locator('.jp-SideBar.jp-mod-left [data-id="jupyter-gpuprof-panel"]');
    await tab.click();
    const panel = page.locator('#jupyter-gpuprof-panel');
    await expect(panel.getByRole('heading', { name: 'GPU Profiler' })).toBeVisible();

    // Status comes from GET /jupyter-gpuprof/status, the count from GET /jupyter-gpuprof/runs.
    const status = panel.locator('.jp-gpuprof-status');
    await expect(status).toHaveText(/^Server extension \S+ · 5 runs in .*gpuprof-runs$/);
    await expect(status).not.toHaveClass(/jp-mod-error/);

    const runs = panel.getByRole('list', { name: 'Saved GPU profiling runs' });
    const good = runs.locator(`li[data-run-id="${FIXTURE_RUN}"]`);
    await expect(good.locator('.jp-gpuprof-run-name')).toHaveText('mlp-fixture');
    await expect(good.locator('.jp-gpuprof-run-created')).toHaveText('2026-11-29 19:13');
    await expect(good.locator('.jp-gpuprof-run-status')).toHaveText('complete');
    await expect(good.locator('.jp-gpuprof-run-verdict')).toHaveText(
      'CPU-only run: GPU metrics unavailable'
    );
    const corrupt = runs.locator(`li[data-run-id="${CORRUPT_RUN}"]`);
    await expect(corrupt.locator('.jp-gpuprof-run-status')).toHaveText('broken');

    // One row: machine-independent (unlike the status line, which holds a path) and unchanged
    // by other tests analysing runs (runs.spec.ts snapshots the whole list).
    expect(await good.screenshot()).toMatchSnapshot('sidebar-run-row.png');
    await page.screenshot({ path: test.info().outputPath('sidebar.png') });
  });

  test('the open-panel command shows the panel', async ({ page }) => {
    const panel = page.locator('#jupyter-gpuprof-panel');
    await expect(panel).toBeHidden();
    await page.evaluate(async () => {
      await window.jupyterapp.commands.execute('jupyter-gpuprof:open-panel');
    });
    await expect(panel).toBeVisible();
    await expect(panel.locator('li.jp-gpuprof-run')).toHaveCount(5);
  });
});
