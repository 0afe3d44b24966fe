#!/usr/bin/env bash
# The corpus on one GPU host (the notebook-free part of the package: msgspec, nvtx and
# nvidia-ml-py carried as wheels in .whl-run): lays nothing out (carry .corpus, made by
# layout.py), runs benchmarks/corpus/run_gpu.py, and packs what comes back into at most two
# files: the results (JSON, reports, run metas) and the run folders' traces.
#   usage: bash benchmarks/corpus/run_gpu.sh OUTDIR [ID ...]
set -u -o pipefail
OUT=${1:?usage: run_gpu.sh OUTDIR [ID ...]}
shift
mkdir -p "$OUT/corpus"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl-run/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw --format=csv || true
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name(0))"
python3 benchmarks/corpus/run_gpu.py .corpus "$OUT/corpus" "$@"
(cd "$OUT/corpus" && tar -czf ../corpus_results.tar.gz --exclude='*.json.gz' --exclude='*.pt.trace.json*' . \
  && tar -cf ../corpus_traces.tar $(find runs_kept -name '*.json.gz' -size -2M 2>/dev/null))
ls -la "$OUT"
