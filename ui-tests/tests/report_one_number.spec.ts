import { expect, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import { openReport, setTheme } from './reportCell';

/**
 * One number, one reading: on a real H200 trace with a sync finding, GPU busy reads the same in
 * the head and the timeline, and the syncs' cost the same in the timeline's idle causes, the
 * sync table and the sync finding of Next steps, per real step and on the totals basis.
 */
const TRACE = 'tests/data/real/sync';

/** The first match of `re` (group 1) in `locator`'s text; fails the test when there is none. */
async function grab(locator: Locator, re: RegExp): Promise<string> {
  const text = (await locator.first().textContent()) ?? '';
  const found = re.exec(text);
  expect(found, `${re} in "${text}"`).not.toBeNull();
  return found![1];
}

/** The syncs' cost as the timeline, the sync table's head and row, and the finding show it. */
async function syncCosts(widget: Locator, total = false): Promise<Record<string, string>> {
  const number = '(\\d[\\d,.]* ms)';
  await widget.getByRole('tab', { name: 'GPU timeline' }).click();
  const timeline = await grab(
    widget.locator('.gpuprof-w-panel-timeline .gpuprof-w-busy'),
    new RegExp(`sync ${number}`)
  );
  await widget.getByRole('tab', { name: 'Transfers & syncs' }).click();
  const panel = widget.locator('.gpuprof-w-panel-transfers');
  const syncHead = await grab(panel.locator('.gpuprof-w-syncs'), new RegExp(`: ${number}$`));
  // the trace's only costly caller (aten::item) carries the whole cost
  const syncRow = await grab(
    panel.locator('.gpuprof-w-synctable tr', { hasText: 'aten::item' }).locator('td').last(),
    new RegExp(`^${number}$`)
  );
  await widget.getByRole('tab', { name: 'Next steps' }).click();
  const finding = widget.locator('.gpuprof-w-findings > li', { hasText: '[sync]' });
  // the finding's one cost line: per real step, and its total after it on the totals basis
  const nextSteps = await grab(
    finding.locator('.gpuprof-w-costline'),
    new RegExp(total ? `\\(costs ${number},` : `^costs ${number} of`)
  );
  return { timeline, syncHead, syncRow, nextSteps };
}

for (const theme of ['light', 'dark']) {
  test(`GPU busy and the sync cost read the same on every tab, ${theme} theme`, async ({
    page
  }) => {
    test.setTimeout(240_000);
    await setTheme(page, theme);
    const { widget } = await openReport(page, `one_number_${theme}.ipynb`, TRACE);

    const busy = /GPU busy (\d+% real \/ \d+% under profiler)/;
    const head = await grab(widget.locator('.gpuprof-w-busy-head'), busy);
    await widget.getByRole('tab', { name: 'GPU timeline' }).click();
    expect(await grab(widget.locator('.gpuprof-w-panel-timeline .gpuprof-w-busy'), busy)).toBe(
      head
    );

    // per real step (the default basis)
    const perStep = await syncCosts(widget);
    const cost = perStep.nextSteps;
    expect(perStep).toEqual({ timeline: cost, syncHead: cost, syncRow: cost, nextSteps: cost });
    // the finding's evidence, written in Python, says the same number per real step
    const evidence = widget.locator('.gpuprof-w-findings > li', { hasText: '[sync]' });
    await expect(evidence.locator('.gpuprof-w-evidence')).toContainText(`≈${cost} per real step`);
    expect(Number.parseFloat(cost)).toBeGreaterThan(1);

    await widget.getByRole('tab', { name: 'Transfers & syncs' }).click();
    await page.mouse.move(0, 0);
    expect(await widget.screenshot()).toMatchSnapshot(`one-number-syncs-${theme}.png`);

    // totals of the profiled steps: still one number, five steps' worth
    await widget.locator('[data-basis="total"]').click();
    const totals = await syncCosts(widget, true);
    const total = totals.nextSteps;
    expect(totals).toEqual({ timeline: total, syncHead: total, syncRow: total, nextSteps: total });
    const steps = Number(await grab(widget.locator('[data-basis="total"]'), /total of (\d+)/));
    expect(Number.parseFloat(total)).toBeCloseTo(Number.parseFloat(cost) * steps, 1);
  });
}
