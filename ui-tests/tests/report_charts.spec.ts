import { expect, test } from '@jupyterlab/galata';

import { openReport, setTheme } from './reportCell';

/**
 * The step chart and the timeline's tools on a real H200 trace, in both themes: a step dot
 * taken by keyboard opens its step in the timeline; the log toggle; an event clicked pins its
 * details; search highlights; the tooltip stays inside the panel; lanes never read a raw id.
 */
const TRACE = 'tests/data/real/tinygpt_before';

for (const theme of ['light', 'dark']) {
  test(`step chart and timeline tools, ${theme} theme`, async ({ page }) => {
    test.setTimeout(240_000);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.sidebar.close('left');
    await setTheme(page, theme);
    const { widget } = await openReport(page, `charts_${theme}.ipynb`, TRACE);

    // the step chart: every dot focusable and named, the profiled ones linked to the timeline
    const chart = widget.locator('.gpuprof-w-stepchart');
    await chart.scrollIntoViewIfNeeded();
    const dots = chart.locator('.gpuprof-w-dot');
    const n = await dots.count();
    expect(n).toBeGreaterThan(3);
    for (let i = 0; i < n; i++) {
      await expect(dots.nth(i)).toHaveAttribute('tabindex', '0');
      await expect(dots.nth(i)).toHaveAttribute('aria-label', /step \d+: [\d,.]+ (ms|µs)/);
    }
    // y labels of one panel never overprint: their boxes do not overlap
    for (const g of await chart.locator('.gpuprof-w-series').all()) {
      const boxes = [];
      for (const t of await g.locator('text[text-anchor="end"]').all()) {
        boxes.push((await t.boundingBox())!);
      }
      for (let i = 1; i < boxes.length; i++) {
        const apart = Math.abs(boxes[i].y - boxes[i - 1].y);
        expect(apart).toBeGreaterThanOrEqual(Math.min(boxes[i].height, boxes[i - 1].height));
      }
    }
    await page.mouse.move(0, 0);
    expect(await chart.screenshot()).toMatchSnapshot(`stepchart-${theme}.png`);
    const toggle = chart.getByRole('button', { name: 'Log scale' });
    await toggle.click();
    await expect(toggle).toHaveAttribute('aria-pressed', 'true');
    await expect(chart.locator('.gpuprof-w-charttitle')).toContainText('log scale');
    await toggle.click();

    // keyboard: focus the second profiled step's dot, Enter opens it in the timeline
    const linked = chart.locator('.gpuprof-w-series-profiled .gpuprof-w-dot[role="button"]');
    expect(await linked.count()).toBeGreaterThan(1);
    await linked.nth(1).focus();
    await page.keyboard.press('Enter');
    await expect(widget.getByRole('tab', { name: 'GPU timeline' })).toHaveAttribute(
      'aria-selected',
      'true'
    );
    const timeline = widget.locator('.gpuprof-w-panel-timeline');
    const svg = timeline.locator('svg.gpuprof-w-tl');
    await expect(svg).toBeFocused();
    const band = timeline.locator('rect.gpuprof-w-step[data-step="1"]');
    const bandBox = (await band.boundingBox())!;
    const svgBox = (await svg.boundingBox())!;
    // zoomed to that step: its band spans (nearly) the whole plot
    expect(bandBox.width).toBeGreaterThan(0.7 * svgBox.width);
    await expect(timeline.locator('.gpuprof-w-axis-title')).toContainText('from the start of step');

    // lanes named by role or number, never by a raw thread id
    for (const lane of await timeline.locator('.gpuprof-w-lane').allTextContents()) {
      expect(lane).not.toMatch(/thread \d{4,}/);
    }
    // ticks: no five-digit µs label
    const axis = (await timeline.locator('.gpuprof-w-axis').allTextContents()).join('|');
    expect(axis).not.toMatch(/\d{5} µs/);

    // into a step whose every event the report carries, zoomed in (W) until GPU events are
    // single; a click on a named one pins its details and draws its CPU→GPU flow
    await svg.dispatchEvent('dblclick'); // the whole window again
    await timeline.locator('rect.gpuprof-w-step[data-events="all"]').first().click();
    await svg.focus();
    for (let i = 0; i < 40 && Number(await svg.getAttribute('data-view-us')) > 800; i++) {
      await page.keyboard.press('w');
    }
    const lanes = await timeline.locator('.gpuprof-w-lane').allTextContents();
    const gpu = lanes.findIndex(l => /stream/.test(l));
    // a kernel wide enough to carry its name inside: a click on its name reaches its rectangle
    const named = timeline
      .locator(`.gpuprof-w-name[data-lane="${gpu}"]:not(.gpuprof-w-name-out)`)
      .first();
    const nameBox = (await named.boundingBox())!;
    await page.mouse.click(nameBox.x + 2, nameBox.y + nameBox.height / 2);
    const pinned = timeline.locator('.gpuprof-w-pinpanel');
    await expect(pinned).toBeVisible();
    await expect(pinned.locator('dt')).toContainText([
      'Event',
      'Lane',
      'Phase',
      'Starts',
      'Duration',
      'Launched by',
      'Correlation id',
      'Host launch'
    ]);
    await expect(timeline.locator('.gpuprof-w-pinned')).toHaveCount(1);
    await expect(timeline.locator('path.gpuprof-w-flow')).toHaveCount(1);

    // search: matches highlighted, the rest dimmed, the count said
    const name = (await pinned.locator('dd').first().textContent()) ?? '';
    expect(name).not.toMatch(/events merged/);
    const search = timeline.getByRole('searchbox', { name: /Find events by name/ });
    await search.fill(name.slice(0, 12));
    await expect(timeline.locator('.gpuprof-w-searchcount')).toHaveText(/^[1-9][\d,]* match(es)?$/);
    expect(await timeline.locator('.gpuprof-w-hit').count()).toBeGreaterThan(0);

    // the tooltip near the right edge stays inside the panel
    const wrap = timeline.locator('.gpuprof-w-timeline');
    const wrapBox = (await wrap.boundingBox())!;
    const lastEvent = timeline.locator(`rect.gpuprof-w-ev[data-lane="${gpu}"]`).last();
    const lastBox = (await lastEvent.boundingBox())!;
    await page.mouse.move(
      Math.min(lastBox.x + lastBox.width / 2, svgBox.x + svgBox.width - 3),
      lastBox.y + lastBox.height / 2
    );
    const tip = timeline.locator('.gpuprof-w-tip');
    await expect(tip).toBeVisible();
    const tipBox = (await tip.boundingBox())!;
    expect(tipBox.x).toBeGreaterThanOrEqual(wrapBox.x - 1);
    expect(tipBox.x + tipBox.width).toBeLessThanOrEqual(wrapBox.x + wrapBox.width + 1);
    await page.mouse.move(0, 0);
    expect(await wrap.screenshot()).toMatchSnapshot(`timeline-tools-${theme}.png`);
  });
}
