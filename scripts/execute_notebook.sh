#!/usr/bin/env bash
# Execute one notebook headlessly (the kernel runs in the notebook's folder) into OUT_DIR, then
# write its offline-readable HTML beside it. The README's main command and the notebook tests
# both run notebooks through this script, so what the tests execute is what a user gets.
#   usage: bash scripts/execute_notebook.sh NOTEBOOK.ipynb OUT_DIR
# Needs `jupyter` (nbconvert) on PATH; fails on the first cell that raises.
set -euo pipefail
NOTEBOOK=${1:?usage: execute_notebook.sh NOTEBOOK.ipynb OUT_DIR}
OUT_DIR=${2:?usage: execute_notebook.sh NOTEBOOK.ipynb OUT_DIR}
name=$(basename "$NOTEBOOK" .ipynb)
mkdir -p "$OUT_DIR"
jupyter nbconvert --to notebook --execute "$NOTEBOOK" \
  --ExecutePreprocessor.timeout=900 --output-dir "$OUT_DIR" --output "$name.ipynb"
# Static outputs first: widget views need a CDN to render, the HTML/PNG fallbacks don't.
jupyter nbconvert --to html "$OUT_DIR/$name.ipynb" --output-dir "$OUT_DIR" \
  --NbConvertBase.display_data_priority="['text/html', 'image/svg+xml', 'image/png', \
'image/jpeg', 'text/markdown', 'text/latex', 'text/plain']"
