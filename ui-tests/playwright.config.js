/**
 * Galata/Playwright settings: Debian's chromium (no browser downloads), no video, one worker.
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// GALATA_PORT: the server's port (jupyter_server_test_config.py reads the same variable).
const port = process.env.GALATA_PORT || '8888';

module.exports = {
  ...baseConfig,
  workers: 1,
  reporter: [
    ['list'],
    ['html', { open: 'never' }],
    // scripts/test.sh sums the counts of every runner from this file.
    ...(process.env.GPUPROF_PW_JSON ? [['json', { outputFile: process.env.GPUPROF_PW_JSON }]] : [])
  ],
  retries: process.env.CI ? 1 : 0,
  expect: {
    ...baseConfig.expect,
    toMatchSnapshot: { maxDiffPixelRatio: 0.02 }
  },
  use: {
    ...baseConfig.use,
    baseURL: `http://127.0.0.1:${port}`,
    video: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync'
      ]
    }
  },
  webServer: {
    command: 'jlpm start',
    url: `http://127.0.0.1:${port}/lab`,
    timeout: 120 * 1000,
    reuseExistingServer: !process.env.CI
  }
};
