/**
 * The run browser as the specs drive it: the fixture runs' ids, opening the sidebar panel and
 * opening the compare view of the tinygpt before/after pair (one copy for every spec).
 */
import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

/** The real before/after runs `fixtures/make_runs.py` adds to the runs root. */
export const BEFORE = '20261129-194000-tinygpt_before';
export const AFTER = '20261129-194500-tinygpt_after';
/** The runs root inside the server's root_dir (see jupyter_server_test_config.py). */
export const RUNS_DIR = 'gpuprof-runs';

/** The GPU Profiler sidebar panel, opened and listing its first run. */
export async function openPanel(page: IJupyterLabPageFixture): Promise<Locator> {
  await page.locator('.jp-SideBar.jp-mod-left [data-id="jupyter-gpuprof-panel"]').click();
  const panel = page.locator('#jupyter-gpuprof-panel');
  await expect(panel.locator('li.jp-gpuprof-run').first()).toBeVisible();
  return panel;
}

/**
 * The compare view of tinygpt before → after, opened from the sidebar (`panel` when it is
 * already open: a second click on its tab would close it) by picking both runs and pressing
 * Compare, once its verdict badge is drawn (the first compare analyses both runs).
 */
export async function openCompare(
  page: IJupyterLabPageFixture,
  open?: Locator
): Promise<{ panel: Locator; view: Locator }> {
  const panel = open ?? (await openPanel(page));
  await panel.getByRole('checkbox', { name: 'Pick tinygpt before for comparison' }).check();
  await panel.getByRole('checkbox', { name: 'Pick tinygpt after for comparison' }).check();
  await panel.getByRole('button', { name: 'Compare' }).click();
  const view = page.locator(`#jupyter-gpuprof-compare-${BEFORE}-${AFTER}`);
  await expect(view.locator('.jp-gpuprof-verdict-significant')).toHaveText('significant', {
    timeout: 60_000
  });
  return { panel, view };
}
