import { expect, test } from '@jupyterlab/galata';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { REPO } from './reportCell';

/**
 * `jupyter gpuprof export`: the page a report is shared as, opened in Chromium as a file from a
 * mail would be: tens of kB, tabs that work without scripts (mouse and keyboard), vector charts,
 * a sans-serif heading, in the reader's light or dark colour scheme.
 */
function exportPage(trace: string): string {
  const out = test.info().outputPath('report.html');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  execFileSync(
    process.env.GPUPROF_PYTHON || 'python',
    ['-m', 'jupyter_gpuprof', 'export', trace, '--html', out],
    { cwd: REPO, stdio: 'inherit', timeout: 300_000 }
  );
  return out;
}

for (const scheme of ['light', 'dark'] as const) {
  test(`the exported page: small, CSS tabs, vector charts, ${scheme} scheme`, async ({
    browser
  }) => {
    test.setTimeout(240_000);
    const file = exportPage('tests/data/real/sync');
    expect(fs.statSync(file).size).toBeLessThan(120_000);
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`file://${file}`);
    await expect(page.locator('script')).toHaveCount(0);

    const heading = page.getByRole('heading', { level: 1 });
    await expect(heading).toContainText('GPU profile');
    const font = await heading.evaluate(el => getComputedStyle(el).fontFamily);
    expect(font).toContain('sans-serif');

    // six tabs, the first (Next steps) shown; a click shows one panel, the arrow keys the next
    const tabs = page.getByRole('radio');
    await expect(tabs).toHaveCount(6);
    const panel = (name: string) => page.getByRole('region', { name, exact: true });
    await expect(panel('Next steps')).toBeVisible();
    await expect(panel('Kernels')).toBeHidden();
    const label = (name: string) => page.locator('.gpuprof-tabs > label', { hasText: name });
    await label('Kernels').click();
    await expect(panel('Kernels')).toBeVisible();
    await expect(panel('Next steps')).toBeHidden();
    await expect(panel('Kernels').getByRole('img')).toHaveCount(1);
    await page.getByRole('radio', { name: 'Kernels' }).focus();
    await page.keyboard.press('ArrowRight');
    await expect(panel('Transfers & syncs')).toBeVisible();
    await expect(panel('Kernels')).toBeHidden();

    await label('Step time').click();
    const chart = panel('Step time').getByRole('img');
    await expect(chart).toBeVisible();
    expect(await chart.evaluate(el => el.tagName.toLowerCase())).toBe('svg');
    // axis labels are text, not pixels
    await expect(chart.locator('text').first()).toBeAttached();

    await label('Next steps').click();
    expect(await page.screenshot({ fullPage: false })).toMatchSnapshot(
      `export-page-${scheme}.png`
    );
    await page.close();
  });
}
