/**
 * Run states in the sidebar and the run view, in the light and the dark theme: a failed run
 * says why first and offers nothing dead, search covers the command line, a new tag reaches
 * the filter at once, a rename reaches the report's heading, Perfetto offline is said with the
 * local path, badges read at 4.5:1, and the compare view's tables never overlap.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';
import * as fs from 'fs';
import * as path from 'path';

import { REPO } from './reportCell';

import { BEFORE, openCompare, openPanel, RUNS_DIR } from './runBrowser';

const NEVER_STEPPED =
  'no training steps seen: the script never called optimizer.step() (or jupyter_gpuprof.step())';

/** A failed run as `jupyter gpuprof run` leaves it: no trace, the reason in meta.json. */
async function uploadFailedRun(page: IJupyterLabPageFixture, runId: string): Promise<void> {
  const meta = {
    schema_version: 1,
    id: runId,
    name: 'main lr=0.1',
    status: 'failed',
    error: NEVER_STEPPED,
    code: 'python main.py --lr 0.1 --epochs 1',
    created: '2026-11-29T18:30:00+00:00'
  };
  await page.contents.uploadContent(JSON.stringify(meta), 'text', `${RUNS_DIR}/${runId}/meta.json`);
}

/**
 * A complete run (the mlp fixture's report) whose meta.json holds a wrongly shaped try: its
 * median as a string, which the server's reader drops and reports as the row's warning.
 */
async function uploadBadTryRun(page: IJupyterLabPageFixture, runId: string): Promise<void> {
  const fixture = path.join(REPO, 'ui-tests', 'fixtures', 'runs', '20261129-191322-mlp');
  const meta = JSON.parse(fs.readFileSync(path.join(fixture, 'meta.json'), 'utf8'));
  Object.assign(meta, {
    id: runId,
    name: 'mlp bad try',
    created: '2026-11-29T18:20:00+00:00',
    tries: [{ fix: 'amp', median_ms: 'fast' }]
  });
  await page.contents.uploadContent(JSON.stringify(meta), 'text', `${RUNS_DIR}/${runId}/meta.json`);
  const summary = fs.readFileSync(path.join(fixture, 'summary.json'), 'utf8');
  await page.contents.uploadContent(summary, 'text', `${RUNS_DIR}/${runId}/summary.json`);
}

/** WCAG contrast of two computed `rgb(…)` colours. */
function contrast(fg: string, bg: string): number {
  const lum = (css: string) => {
    const [r, g, b] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map(v => {
      const c = Number(v) / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [hi, lo] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/** Every visible, non-empty badge under `root`: its text and its measured contrast. */
async function badgeContrasts(root: ReturnType<IJupyterLabPageFixture['locator']>) {
  const styles = await root.locator('.jp-gpuprof-badge').evaluateAll(nodes =>
    nodes
      .filter(n => (n.textContent ?? '').trim() !== '' && n.getClientRects().length > 0)
      .map(n => ({
        text: n.textContent ?? '',
        fg: getComputedStyle(n).color,
        bg: getComputedStyle(n).backgroundColor
      }))
  );
  return styles.map(s => ({ text: s.text, ratio: contrast(s.fg, s.bg) }));
}

/** A two-rank run from the committed H200 traces of a DDP job with a straggler (rank 1). */
async function uploadDdpRun(page: IJupyterLabPageFixture, runId: string): Promise<void> {
  const meta = {
    schema_version: 1,
    id: runId,
    name: 'ddp straggler',
    status: 'complete',
    error: null,
    tags: [],
    code: 'torchrun --nproc-per-node 2 train.py',
    created: '2026-11-29T19:50:00+00:00'
  };
  await page.contents.uploadContent(JSON.stringify(meta), 'text', `${RUNS_DIR}/${runId}/meta.json`);
  for (const rank of [0, 1]) {
    const name = `trace.rank${rank}.json.gz`;
    const file = path.join(REPO, 'tests', 'data', 'real', 'ddp_workload_straggler', name);
    const data = fs.readFileSync(file).toString('base64');
    await page.contents.uploadContent(data, 'base64', `${RUNS_DIR}/${runId}/${name}`);
  }
}

/** The element the chart's aria-details names, found on the page by id. */
async function dataOf(page: IJupyterLabPageFixture, chart: Locator): Promise<Locator> {
  const id = await chart.getAttribute('aria-details');
  expect(id, 'the chart names its data table').toBeTruthy();
  return page.locator(`[id="${id}"]`);
}

/** The body rows of `table` as cell texts. */
async function rowsOf(table: Locator): Promise<string[][]> {
  return table
    .locator('tbody tr')
    .evaluateAll(trs => trs.map(tr => Array.from(tr.children).map(td => td.textContent ?? '')));
}

for (const theme of ['light', 'dark'] as const) {
  test.describe(`run states (${theme} theme)`, () => {
    test.beforeEach(async ({ page }) => {
      if (theme === 'dark') {
        await page.theme.setDarkTheme();
      } else {
        await page.theme.setLightTheme();
      }
    });

    test('a failed run says why first and offers no dead button', async ({ page }) => {
      const runId = `20261129-183000-failed${theme}`;
      await uploadFailedRun(page, runId);
      try {
        await checkFailedRun(page, runId, theme);
      } finally {
        // the other specs count the fixture runs
        await page.contents.deleteDirectory(`${RUNS_DIR}/${runId}`);
      }
    });

    async function checkFailedRun(page: IJupyterLabPageFixture, runId: string, theme: string) {
      const panel = await openPanel(page);
      await panel.getByRole('button', { name: 'Refresh the run list' }).click();
      const row = panel.locator(`li[data-run-id="${runId}"]`);
      await expect(row.locator('.jp-gpuprof-run-status')).toHaveText('failed');
      // not comparable: its pick is disabled and says why
      const pick = row.locator('.jp-gpuprof-pick');
      await expect(pick).toBeDisabled();
      await expect(pick).toHaveAttribute('title', /complete run with a readable trace/);

      await row.locator('.jp-gpuprof-run-name').click();
      const detail = page.locator(`#jupyter-gpuprof-run-${runId}`);
      const header = detail.locator('.jp-gpuprof-detail-header');
      // the line under the title is the real reason, not "no trace file (status failed)"
      await expect(header.locator(':scope > *').nth(1)).toHaveText(
        `The run failed: ${NEVER_STEPPED}`
      );
      await expect(detail.getByRole('alert')).toBeVisible();
      await expect(detail.getByRole('button', { name: 'Download trace' })).toHaveCount(0);
      await expect(detail).not.toContainText('no trace file');
      expect(await header.screenshot()).toMatchSnapshot(`failed-run-header-${theme}.png`);

      // search covers the command line
      await panel.getByRole('searchbox', { name: 'Search runs' }).fill('main.py --lr 0.1');
      await expect(panel.locator('li.jp-gpuprof-run')).toHaveCount(1);
      await expect(panel.locator('li.jp-gpuprof-run .jp-gpuprof-run-name')).toHaveText(
        'main lr=0.1'
      );
      await panel.getByRole('searchbox', { name: 'Search runs' }).fill('');
    }

    test("a run with a wrongly shaped try shows the server's warning", async ({ page }) => {
      const runId = `20261129-182000-badtry${theme}`;
      await uploadBadTryRun(page, runId);
      try {
        const panel = await openPanel(page);
        await panel.getByRole('button', { name: 'Refresh the run list' }).click();
        const row = panel.locator(`li[data-run-id="${runId}"]`);
        const marker = row.locator('.jp-gpuprof-run-warning');
        await expect(marker).toBeVisible();
        // the server's line, whole: to the mouse and (after the label) to a screen reader
        const said = /^meta\.json: tries\[0\] ignored: .*`tries\[0\]\.median_ms`/;
        await expect(marker).toHaveAttribute('title', said);
        const warning = (await marker.getAttribute('title')) ?? '';
        await expect(marker.locator('[aria-hidden="true"]')).toHaveText('⚠ meta partly unreadable');
        await expect(marker.locator('.gpuprof-w-sr')).toHaveText(
          `meta partly unreadable: ${warning}`
        );
        const button = row.getByRole('button', { name: 'mlp bad try' });
        await expect(button).toHaveAccessibleDescription(`meta partly unreadable: ${warning}`);
        // the fixture's own run, read whole, has none
        await expect(
          panel.locator('li[data-run-id="20261129-191322-mlp"] .jp-gpuprof-run-warning')
        ).toHaveCount(0);
        const [measured] = (await badgeContrasts(row)).filter(m => m.text.startsWith('⚠ meta'));
        expect(measured.ratio).toBeGreaterThanOrEqual(4.5);
        test.info().annotations.push({
          type: 'contrast',
          description: `warning marker ${measured.ratio.toFixed(2)}:1`
        });
        await page.mouse.move(0, 0);
        expect(await row.screenshot()).toMatchSnapshot(`bad-try-row-${theme}.png`);

        // its view says the same line under the title, and opens with no error
        await button.click();
        const detail = page.locator(`#jupyter-gpuprof-run-${runId}`);
        const header = detail.locator('.jp-gpuprof-detail-header');
        await expect(header.locator('.jp-gpuprof-detail-warning')).toHaveText(`⚠ ${warning}`);
        await expect(detail).not.toContainText('Unhandled error');
        expect(await header.screenshot()).toMatchSnapshot(`bad-try-header-${theme}.png`);
      } finally {
        // the other specs count the fixture runs
        await page.contents.deleteDirectory(`${RUNS_DIR}/${runId}`);
      }
    });

    test('tags reach the filter at once, a rename reaches the report heading', async ({ page }) => {
      const panel = await openPanel(page);
      await panel.locator(`li[data-run-id="${BEFORE}"] .jp-gpuprof-run-name`).click();
      const detail = page.locator(`#jupyter-gpuprof-run-${BEFORE}`);
      const heading = detail.locator('.gpuprof-w-title');
      await expect(heading).toHaveText('GPU profile — tinygpt before', { timeout: 60_000 });

      const tag = `try-${theme}`;
      await detail.getByRole('button', { name: 'Tags' }).click();
      await page.locator('.jp-Dialog input').fill(`baseline, ${tag}`);
      await page.locator('.jp-Dialog').getByRole('button', { name: 'Save tags' }).click();
      const filter = panel.getByRole('combobox', { name: 'Filter by tag' });
      await expect(filter.locator(`option[value="${tag}"]`)).toHaveCount(1); // no refresh

      await detail.getByRole('button', { name: 'Rename' }).click();
      await page.locator('.jp-Dialog input').fill(`tinygpt before ${theme}`);
      await page.locator('.jp-Dialog').getByRole('button', { name: 'Rename' }).click();
      await expect(heading).toHaveText(`GPU profile — tinygpt before ${theme}`);
      await expect(detail.locator('.jp-gpuprof-detail-title')).toHaveText(
        `tinygpt before ${theme}`
      );
      // back as it was, for the other tests
      await detail.getByRole('button', { name: 'Rename' }).click();
      await page.locator('.jp-Dialog input').fill('tinygpt before');
      await page.locator('.jp-Dialog').getByRole('button', { name: 'Rename' }).click();
      await detail.getByRole('button', { name: 'Tags' }).click();
      await page.locator('.jp-Dialog input').fill('baseline');
      await page.locator('.jp-Dialog').getByRole('button', { name: 'Save tags' }).click();
      await expect(heading).toHaveText('GPU profile — tinygpt before');
    });

    test('Perfetto offline is said, with the local path', async ({ page }) => {
      const opened: string[] = [];
      page.context().on('page', p => opened.push(p.url()));
      await page.route('https://ui.perfetto.dev/**', route => route.abort('internetdisconnected'));
      const panel = await openPanel(page);
      await panel.locator(`li[data-run-id="${BEFORE}"] .jp-gpuprof-run-name`).click();
      const detail = page.locator(`#jupyter-gpuprof-run-${BEFORE}`);
      await detail.getByRole('button', { name: 'Open in Perfetto' }).click({ timeout: 60_000 });
      const status = detail.locator('.gpuprof-w-toolstatus');
      await expect(status).toContainText('Perfetto (ui.perfetto.dev) cannot be reached');
      await expect(status).toContainText('Download trace');
      await expect(status).toContainText('chrome://tracing');
      expect(opened).toEqual([]); // no tab with the browser's "site can't be reached"
    });

    test("the compare chart's numbers are a table under it, reached by keyboard", async ({
      page
    }) => {
      const { view } = await openCompare(page);
      const chart = view.locator('svg.jp-gpuprof-dist');
      const data = await dataOf(page, chart);
      await expect(data).toHaveClass(/jp-gpuprof-chartdata/);
      const table = data.locator('table');
      await expect(table).toBeHidden(); // collapsed until asked for
      await data.locator('summary').focus();
      await page.keyboard.press('Enter');
      await expect(table).toBeVisible();
      // the medians the change line states, the step counts the note states
      const change = (await view.locator('.jp-gpuprof-change-line').textContent()) ?? '';
      const [, m0, m1] = /^Median ([\d.,]+ ms) → ([\d.,]+ ms)/.exec(change) ?? [];
      await expect(table.locator('caption')).toHaveText(
        `Steps per step-time bin, before: tinygpt before (median ${m0}) and after: tinygpt after (median ${m1})`
      );
      const note = (await view.locator('.jp-gpuprof-note').first().textContent()) ?? '';
      const [, n0, n1] = /n = (\d+) before, (\d+) after/.exec(note) ?? [];
      const rows = await rowsOf(table);
      expect(rows.reduce((n, r) => n + Number(r[1]), 0)).toBe(Number(n0));
      expect(rows.reduce((n, r) => n + Number(r[2]), 0)).toBe(Number(n1));
      // one row per drawn bin (a bin of both sides is drawn as two bars)
      const bars = await chart.locator('rect.jp-gpuprof-dist-bar[y]').count();
      const both = rows.filter(r => r[1] !== '0' && r[2] !== '0').length;
      expect(bars - 2).toBe(rows.length + both); // two legend swatches
      // the first bin starts and the last ends where the chart's axis does
      const axis = await chart.locator('text.jp-gpuprof-axis-label').allTextContents();
      const lo = Number.parseFloat(rows[0][0]);
      const hi = Number.parseFloat(rows[rows.length - 1][0].split(' – ')[1]);
      expect(`${lo.toFixed(1)} ms`).toBe(axis[0]);
      expect(`${hi.toFixed(1)} ms`).toBe(axis[1]);
      await page.mouse.move(0, 0);
      expect(await data.screenshot()).toMatchSnapshot(`compare-chart-table-${theme}.png`);
    });

    test("the rank chart names the ranks table, which holds each bar's numbers", async ({
      page
    }) => {
      const runId = `20261129-195000-ddp${theme}`;
      await uploadDdpRun(page, runId);
      try {
        const panel = await openPanel(page);
        await panel.locator(`li[data-run-id="${runId}"] .jp-gpuprof-run-name`).click();
        const ranks = page.locator(`#jupyter-gpuprof-run-${runId} .jp-gpuprof-ranks`);
        const chart = ranks.locator('svg.jp-gpuprof-rankchart');
        await expect(chart).toBeVisible({ timeout: 120_000 });
        const table = await dataOf(page, chart);
        await expect(table.locator('caption')).toHaveText('Each rank, ms per step');
        const rows = await rowsOf(table);
        expect(rows.map(r => r[0])).toEqual(['0', '1 (straggler)']);
        // the step time written at each bar's end reads as the table's step column
        const labels = await chart.locator('text').allTextContents();
        expect(labels.filter(l => l.endsWith(' ms'))).toEqual(rows.map(r => r[1]));
        expect(labels.filter(l => l.startsWith('rank'))).toEqual(['rank 0', 'rank 1 ⚠']);
        // each bar's compute and comm lengths are in the ratio of the table's numbers
        const widths = await chart
          .locator('rect')
          .evaluateAll(rs => rs.map(r => Number(r.getAttribute('width'))));
        const ms = (cell: string) => Number.parseFloat(cell.replace(/,/g, ''));
        for (const [i, r] of rows.entries()) {
          const [compute, comm] = [widths[2 * i], widths[2 * i + 1]];
          expect(compute / (compute + comm)).toBeCloseTo(ms(r[2]) / (ms(r[2]) + ms(r[3])), 2);
        }
        await page.mouse.move(0, 0);
        expect(await ranks.screenshot()).toMatchSnapshot(`ranks-chart-table-${theme}.png`);
      } finally {
        // the other specs count the fixture runs
        await page.contents.deleteDirectory(`${RUNS_DIR}/${runId}`);
      }
    });

    test('badges read at 4.5:1; the compare tables never overlap', async ({ page }) => {
      const { panel, view } = await openCompare(page);
      // the comparison's own sentence; the title tells the sides apart; ms per step
      await expect(view.locator('.jp-gpuprof-change-note')).toHaveText(
        /^The change is real: after is 60\.5% faster \(×2\.5\d\)\.$/
      );
      await expect(view.locator('h2')).toHaveText('tinygpt before → tinygpt after');
      await expect(view.locator('.jp-gpuprof-deltas th').first()).toHaveText('name');
      await expect(view.locator('.jp-gpuprof-deltas').first()).toContainText('ms/step');
      await expect(view).not.toContainText('µs/step');

      const boxes = await view.locator('.jp-gpuprof-deltas').evaluateAll(nodes =>
        nodes.map(n => {
          const r = n.getBoundingClientRect();
          return { title: n.querySelector('h4')?.textContent ?? '', ...r.toJSON() };
        })
      );
      expect(boxes.map(b => b.title)).toEqual([
        'Kernel kinds: improvements',
        'Kernel kinds: regressions',
        'Ops: improvements',
        'Ops: regressions'
      ]);
      for (let i = 0; i < boxes.length; i++) {
        for (let j = i + 1; j < boxes.length; j++) {
          const [a, b] = [boxes[i], boxes[j]];
          const apart =
            a.right <= b.left || b.right <= a.left || a.bottom <= b.top || b.bottom <= a.top;
          expect({ pair: `${a.title} / ${b.title}`, apart }).toEqual({
            pair: `${a.title} / ${b.title}`,
            apart: true
          });
        }
      }

      // badges in the compare cards and (now analysed) the sidebar rows
      await panel.getByRole('button', { name: 'Refresh the run list' }).click();
      await expect(
        panel.locator(`li[data-run-id="${BEFORE}"] .jp-gpuprof-badge-precision`)
      ).toBeVisible();
      const inView = await badgeContrasts(view);
      expect(inView.map(m => m.text)).toEqual(['significant', 'precision', 'launch']);
      // the list redraws on every poll: measure once it shows the analysed runs' badges
      await expect
        .poll(async () => (await badgeContrasts(panel)).map(m => m.text), { timeout: 20_000 })
        .toContain('precision');
      const inPanel = await badgeContrasts(panel);
      const measured = [...inView, ...inPanel];
      for (const m of measured) {
        expect({ badge: m.text, ok: m.ratio >= 4.5 }).toEqual({ badge: m.text, ok: true });
      }
      test.info().annotations.push({
        type: 'contrast',
        description: measured.map(m => `${m.text} ${m.ratio.toFixed(2)}:1`).join(', ')
      });
      expect(await view.screenshot()).toMatchSnapshot(`compare-${theme}.png`);
      const ops = view.locator('.jp-gpuprof-deltas');
      expect(await ops.nth(2).screenshot()).toMatchSnapshot(`compare-ops-improved-${theme}.png`);
      expect(await ops.nth(3).screenshot()).toMatchSnapshot(`compare-ops-regressed-${theme}.png`);
    });
  });
}
