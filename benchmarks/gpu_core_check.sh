#!/usr/bin/env bash
# The core's GPU proof in one go (about 4-6 minutes on one H200): executes
# notebooks/gpu_workloads.ipynb (%%gpuprofile on eight workloads), measures the baseline pass's
# overhead against a plain loop, and re-captures the `sync` reference trace.
#   usage: bash benchmarks/gpu_core_check.sh OUTDIR      (the notebook stack importable)
set -u -o pipefail
OUT=${1:?usage: gpu_core_check.sh OUTDIR}
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv || true
$PY -c "import torch;print('torch',torch.__version__,'gpu',torch.cuda.get_device_name(0))"
t0=$(date +%s)
timeout 120 $PY benchmarks/capture_workloads.py --out "$OUT/real" --only sync
echo "sync re-capture rc=$? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 180 $PY benchmarks/bench_baseline_overhead.py --json "$OUT/overhead.json"
echo "overhead rc=$? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
(cd notebooks && timeout 300 $PY -m nbconvert --to notebook --execute gpu_workloads.ipynb \
  --ExecutePreprocessor.timeout=240 --allow-errors --output-dir "$OUT" --output gpu_workloads.ipynb)
echo "notebook rc=$? in $(( $(date +%s) - t0 )) s"
# run folders: metadata and summaries (traces stay behind: too big to bring back)
(cd notebooks/.gpuprof && tar -cf "$OUT/runs.tar" --exclude='*.json.gz' runs) || true
tar -C "$OUT" -cf "$OUT/real.tar" real && rm -rf "$OUT/real"
ls -la "$OUT"
date -u
