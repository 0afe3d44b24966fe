import { expect, test } from '@jupyterlab/galata';

/**
 * "Try the top fixes" in the report widget over a live CPU kernel: the button runs the tries
 * in the kernel (a CPU step has no finding to take fixes from: it offers compile), the
 * progress line follows them, the report redraws with what they measured, and Cancel stops
 * a second run with nothing kept.
 */
const SETUP = [
  'import torch',
  'from torch import nn',
  'torch.manual_seed(0)',
  'model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))',
  'opt = torch.optim.SGD(model.parameters(), lr=0.01)',
  '%load_ext jupyter_gpuprof'
].join('\n');
const STEP = [
  '%%gpuprofile --steps 200 --warmup 1 --active 1 --name widget-try',
  'x = torch.randn(8, 16)',
  'nn.functional.cross_entropy(model(x), torch.randint(0, 4, (8,))).backward()',
  'opt.step()',
  'opt.zero_grad()'
].join('\n');

test('the widget tries its fixes in the kernel, redraws, and cancels', async ({ page }) => {
  test.setTimeout(300_000);
  await page.notebook.createNew('widget_try.ipynb');
  await page.notebook.setCell(0, 'code', SETUP);
  await page.notebook.runCell(0, true);
  await page.notebook.addCell('code', STEP);
  await page.notebook.runCell(1, true);
  const widget = page.locator('.jp-OutputArea-output .gpuprof-w');
  await expect(widget).toHaveCount(1, { timeout: 120_000 });
  await widget.getByRole('tab', { name: 'Next steps' }).click();
  const button = widget.locator('.gpuprof-w-trybutton');
  await expect(button).toHaveText('Try the top fixes (compile)');
  await expect(widget.locator('.gpuprof-w-tries')).toHaveCount(0);

  await button.click();
  // the report redraws with the tries once they are done (its panels are built again)
  const tried = page.locator('.jp-OutputArea-output .gpuprof-w .gpuprof-w-tries');
  await expect(tried).toContainText('compile', { timeout: 240_000 });
  const again = page.locator('.jp-OutputArea-output .gpuprof-w');
  await again.getByRole('tab', { name: 'Next steps' }).click();
  await expect(again.locator('.gpuprof-w-trystatus')).toContainText('tried');

  // a second run (200 steps a round: long enough to cancel mid-run), cancelled: the status
  // says nothing was kept and the button comes back. On a loaded machine the click can reach
  // the kernel only once the measured tries are being saved: then they are kept and the
  // status says the Cancel came too late (tests/tries/test_widget_tries.py pins both sides).
  await again.locator('.gpuprof-w-trybutton').click();
  await expect(again.locator('.gpuprof-w-trybutton')).toHaveText('Cancel');
  await again.locator('.gpuprof-w-trybutton').click();
  await expect(again.locator('.gpuprof-w-trybutton', { hasText: 'Cancel' })).toHaveCount(0, {
    timeout: 120_000
  });
  await again.getByRole('tab', { name: 'Next steps' }).click(); // a redraw shows the first tab
  await expect(again.locator('.gpuprof-w-trystatus')).toContainText(
    /^cancelled: nothing was kept|\(the Cancel came too late: they were being saved\)$/
  );
  await expect(again.locator('.gpuprof-w-trybutton')).toHaveText('Try the top fixes (compile)');
});
