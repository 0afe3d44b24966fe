// Notebook 7 check: open a notebook in a running `jupyter notebook` server, run every cell,
// and wait for the jupyter_gpuprof report widget with its five panels (real Chromium).
//   node check_notebook7.mjs BASE_URL NOTEBOOK_PATH SCREENSHOT
import { chromium } from '@playwright/test';

const [base, nbPath, shot] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync']
});
const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
const t0 = Date.now();
await page.goto(`${base}/notebooks/${nbPath}`);
await page.locator('.jp-Notebook').waitFor({ timeout: 60000 });
// Run > Run All Cells from the menu bar
await page.locator('.lm-MenuBar-itemLabel', { hasText: /^Run$/ }).first().click();
await page.locator('.lm-Menu-itemLabel', { hasText: 'Run All Cells' }).first().click();
const widget = page.locator('.jp-OutputArea-output .gpuprof-w').first();
try {
  await widget.waitFor({ timeout: Number(process.env.NB7_TIMEOUT_MS || 240000) });
} catch (e) {
  await page.screenshot({ path: shot, fullPage: true });
  const outputs = await page.locator('.jp-OutputArea-output').allTextContents();
  console.log(JSON.stringify({ error: String(e).split('\n')[0], outputs: outputs.slice(0, 6) }));
  await browser.close();
  process.exit(1);
}
const tabs = await widget.locator('.gpuprof-w-tab').allTextContents();
const stats = await widget.locator('.gpuprof-w-stats').first().textContent();
await widget.scrollIntoViewIfNeeded();
await page.screenshot({ path: shot, fullPage: false });
console.log(JSON.stringify({ tabs, stats, seconds: (Date.now() - t0) / 1000 }));
await browser.close();
if (tabs.length !== 5 || !/median/.test(stats || '')) process.exit(1);
