#!/usr/bin/env bash
# Install jupyter_gpuprof into .venv and execute notebooks/quickstart.ipynb headlessly (CPU is
# fine): writes notebooks/executed/quickstart.ipynb and an offline-readable quickstart.html,
# then prints how to open the result in JupyterLab. Optional argument: another notebook.
# The notebook's runs are saved in .gpuprof/runs here, where `jupyter lab` started from this
# folder (the command printed at the end) lists them in its GPU Profiler sidebar.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
NOTEBOOK=${1:-notebooks/quickstart.ipynb}
OUT_DIR=notebooks/executed
export PIP_DISABLE_PIP_VERSION_CHECK=1
export JUPYTER_GPUPROF_RUNS=$PWD/.gpuprof/runs
T0=$SECONDS

[ -f "$NOTEBOOK" ] || { echo "no notebook at $NOTEBOOK" >&2; exit 1; }
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
export PATH=$PWD/.venv/bin:$PATH

echo "== install"
# The CPU build first: the package's own range (torch>=2.1) would otherwise pull CUDA wheels.
pip install torch==2.13.0
# An earlier run's `jupyter-builder develop` links the venv's labextension folder to the build
# folder, so pip's editable install wrote install.json through that link into the build;
# left there, this install would add it to the wheel twice and fail.
rm -f jupyter_gpuprof/labextension/install.json
pip install -e .
# The report widget's ESM is a build output that the editable hook makes; without it the
# notebook's widgets could not render, so build it here if the hook did not.
[ -f jupyter_gpuprof/views/static/widget.js ] || { jlpm install && jlpm build; }
# Editable installs don't link the lab extension or enable the server extension by themselves.
jupyter-builder develop --overwrite .
jupyter server extension enable --sys-prefix jupyter_gpuprof
echo "== install: $((SECONDS - T0))s"

T1=$SECONDS
echo "== execute $NOTEBOOK"
bash scripts/execute_notebook.sh "$NOTEBOOK" "$OUT_DIR"
echo "== execute: $((SECONDS - T1))s"

name=$(basename "$NOTEBOOK" .ipynb)
root_flag=""
[ "$(id -u)" -eq 0 ] && root_flag=" --allow-root"
echo
echo "Executed notebook: $OUT_DIR/$name.ipynb"
echo "Offline HTML:      $OUT_DIR/$name.html"
echo "Open it in JupyterLab (the GPU Profiler sidebar lists its runs) with:"
echo "  .venv/bin/jupyter lab $OUT_DIR/$name.ipynb$root_flag"
echo "== example.sh total: $((SECONDS - T0))s"
