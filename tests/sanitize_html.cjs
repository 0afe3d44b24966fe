// Runs JupyterLab's own HTML sanitizer (the one untrusted notebook outputs go through) over
// stdin and prints the result; tests/views/test_fallback.py checks what survives it.
const path = require('path');
const { Sanitizer } = require(
  path.join(process.cwd(), 'node_modules/@jupyterlab/apputils/lib/sanitizer.js')
);
const html = require('fs').readFileSync(0, 'utf8');
process.stdout.write(new Sanitizer().sanitize(html));
