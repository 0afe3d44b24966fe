#!/usr/bin/env bash
# The corpus on one GPU host (the notebook-free part of the package: msgspec, nvtx and
# nvidia-ml-py carried as wheels in .whl-run): lays nothing out (carry .corpus, made by
# layout.py), runs benchmarks/corpus/run_gpu.py: corpus/corpus.json (the results, written after
# each script) and kept/<id>.tar.gz (each script's reports and run folders, packed as it ends).
#   usage: bash benchmarks/corpus/run_gpu.sh OUTDIR [ID ...]
set -u -o pipefail
OUT=${1:?usage: run_gpu.sh OUTDIR [ID ...]}
shift
mkdir -p "$OUT/corpus"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl-run/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
# one try (a re-run of the script up to its baseline) may take this long
export JUPYTER_GPUPROF_TRY_TIMEOUT_S=${JUPYTER_GPUPROF_TRY_TIMEOUT_S:-90}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv || true
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
python3 benchmarks/corpus/run_gpu.py .corpus "$OUT/corpus" "$@"
mv "$OUT/corpus/kept" "$OUT/kept" 2>/dev/null || true
rm -rf "$OUT/corpus/runs"
ls -la "$OUT"
