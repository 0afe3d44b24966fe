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
// Run > Run All Cells through the command palette-free menu path
await page.locator('.jp-MenuBar-itemLabel', { hasText: 'Run' }).first().click();
await page.locator('.lm-Menu-itemLabel', { hasText: 'Run All Cells' }).first().click();
const widget = page.locator('.jp-OutputArea-output .gpuprof-w').first();
await widget.waitFor({ timeout: 240000 });
const tabs = await widget.locator('.gpuprof-w-tab').allTextContents();
const stats = await widget.locator('.gpuprof-w-stats').first().textContent();
await widget.scrollIntoViewIfNeeded();
await page.screenshot({ path: shot, fullPage: false });
console.log(JSON.stringify({ tabs, stats, seconds: (Date.now() - t0) / 1000 }));
await browser.close();
if (tabs.length !== 5 || !/median/.test(stats || '')) process.exit(1);
