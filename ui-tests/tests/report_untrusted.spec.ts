import { expect, test } from '@jupyterlab/galata';
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

import { REPO, setTheme } from './reportCell';

/**
 * A notebook someone sent you: executed elsewhere, opened here untrusted. The widget cannot run,
 * so the static copy is what shows: its notice first (where the interactive report opens, true
 * here as in nbconvert's HTML, which has no File menu to trust from), PNG charts (JupyterLab's
 * sanitizer strips inline SVG, which left run-on text such as "4050607080ms"), no widget.
 *
 * EXECUTED: a committed executed notebook to open instead of executing the fixture notebook
 * (null: `fixtures/make_executed.py` executes the report of a committed real trace, so the
 * outputs are the current code's).
 */
const EXECUTED: string | null = null;

/** The executed notebook's path on disk, executed now unless `EXECUTED` names one. */
function executedNotebook(): string {
  if (EXECUTED) {
    return path.join(REPO, EXECUTED);
  }
  const out = test.info().outputPath('shared_report.ipynb');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  execFileSync(
    process.env.GPUPROF_PYTHON || 'python',
    [path.join(REPO, 'ui-tests', 'fixtures', 'make_executed.py'), out],
    { cwd: REPO, stdio: 'inherit', timeout: 300_000 }
  );
  return out;
}

/** Whether each code cell of the open notebook is trusted, read from JupyterLab's cell models. */
function cellTrust(): boolean[] {
  const panel = window.jupyterapp.shell.currentWidget as unknown as {
    content: { widgets: { model: { type: string; trusted: boolean } }[] };
  };
  return panel.content.widgets.filter(c => c.model.type === 'code').map(c => c.model.trusted);
}

for (const theme of ['light', 'dark']) {
  test(`an untrusted executed notebook shows the static report with PNG charts, ${theme} theme`, async ({
    page,
    tmpPath
  }) => {
    test.setTimeout(240_000);
    // tall enough for the whole static copy: the notebook draws only the cells in view
    await page.setViewportSize({ width: 1280, height: 3400 });
    await setTheme(page, theme);
    const name = `shared_${theme}.ipynb`;
    await page.contents.uploadFile(executedNotebook(), `${tmpPath}/${name}`);
    await page.sidebar.openTab('filebrowser');
    await page.notebook.openByPath(`${tmpPath}/${name}`);
    await page.notebook.activate(name);

    const trust = await page.evaluate(cellTrust);
    expect(trust.length).toBeGreaterThan(0);
    expect(trust.every(t => !t)).toBe(true);

    // every report of the notebook (one unless EXECUTED names a longer one) as its static copy
    const outputs = page.locator('.jp-OutputArea-output .gpuprof-static');
    await expect(outputs.first()).toBeVisible();
    // the widget never ran here: only its plain-text line
    await expect(page.locator('.jp-OutputArea-output .gpuprof-w')).toHaveCount(0);
    for (const report of await outputs.all()) {
      await report.scrollIntoViewIfNeeded();
      await expect(
        report.getByText('Static copy of the report. The interactive report opens in JupyterLab')
      ).toBeVisible();
      await expect(report.getByText('File ▸ Trust Notebook')).toHaveCount(0);
      // charts: PNG images the sanitizer kept and the browser decoded
      const images = report.locator('img');
      expect(await images.count()).toBeGreaterThanOrEqual(EXECUTED ? 1 : 3);
      for (const img of await images.all()) {
        await img.scrollIntoViewIfNeeded();
        await expect(img).toBeVisible();
        expect(await img.evaluate((el: HTMLImageElement) => el.naturalWidth)).toBeGreaterThan(100);
        expect(await img.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
      }
      // no chart drawn as SVG text, whose labels would run together once the SVG is stripped
      await expect(report.locator('svg, text')).toHaveCount(0);
      const shown = (await report.innerText()).replace(/\s+/g, ' ');
      expect(shown).not.toMatch(/\d{4,}ms/);
      expect(shown).not.toMatch(/warm-up \(n=\d+\)/);
    }

    const output = outputs.first();
    await output.scrollIntoViewIfNeeded();
    await page.mouse.move(0, 0);
    expect(await output.screenshot()).toMatchSnapshot(`untrusted-static-${theme}.png`);
  });
}
