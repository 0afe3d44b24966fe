/**
 * A notebook that shows the report of a committed real trace, for the report specs: tall output
 * above it (so the notebook scrolls), then the widget, with the trace's folder printed as it is
 * in the repository (the title and screenshots stay machine-independent).
 */
import { expect, IJupyterLabPageFixture } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';
import * as path from 'path';

/** The repository root, where `tests/data/real/<trace>` lives. */
export const REPO = path.resolve(__dirname, '..', '..');

/** The report widget of `traceDir` (relative to the repository) in a new notebook `name`. */
export async function openReport(
  page: IJupyterLabPageFixture,
  name: string,
  traceDir: string
): Promise<{ widget: Locator; kernelsPerStep: number }> {
  await page.notebook.createNew(name);
  await page.notebook.setCell(0, 'code', "print('\\n'.join(map(str, range(60))))");
  await page.notebook.runCell(0, true);
  await page.notebook.addCell(
    'code',
    [
      'from jupyter_gpuprof.report import analyze_path',
      'from jupyter_gpuprof.views.widget import ReportWidget',
      `s = analyze_path(${JSON.stringify(path.join(REPO, traceDir))}).to_json()`,
      `s['source']['path'] = ${JSON.stringify(traceDir)}`,
      "print('kernels per step:', (s.get('launch') or {}).get('kernels_per_step'))",
      'ReportWidget(s)'
    ].join('\n')
  );
  await page.notebook.runCell(1, true);
  const widget = page.locator('.jp-OutputArea-output .gpuprof-w');
  await expect(widget).toHaveCount(1, { timeout: 120_000 });
  const printed = await page
    .locator('.jp-OutputArea-output', { hasText: 'kernels per step:' })
    .last()
    .textContent();
  const kernelsPerStep = Number(/kernels per step: ([\d.]+)/.exec(printed ?? '')?.[1] ?? NaN);
  return { widget, kernelsPerStep };
}

/** Light or dark JupyterLab theme. */
export async function setTheme(page: IJupyterLabPageFixture, theme: string): Promise<void> {
  if (theme === 'dark') {
    await page.theme.setDarkTheme();
  } else {
    await page.theme.setLightTheme();
  }
}
