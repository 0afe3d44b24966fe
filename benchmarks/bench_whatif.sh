#!/usr/bin/env bash
# The what-if model's GPU proof (about 5-7 minutes on one H200): every workload with one known
# bottleneck, its predicted gain, the gain of its hand-applied fix, and `--try` where automatic.
#   usage: bash benchmarks/bench_whatif.sh OUTDIR   (torch, transformers, msgspec importable)
set -u -o pipefail
OUT=${1:?usage: bench_whatif.sh OUTDIR}
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
date -u
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv || true
$PY -c "import torch, transformers; print('torch', torch.__version__, 'transformers',
transformers.__version__, 'gpu', torch.cuda.get_device_name(0))"
t0=$(date +%s)
timeout 500 $PY benchmarks/bench_whatif.py --json "$OUT/whatif_h200.json" --budget-s "${BUDGET_S:-450}" ${ONLY:+--only "$ONLY"} ${KEEP:+--keep "$KEEP"}
echo "bench_whatif rc=$? in $(( $(date +%s) - t0 )) s"
date -u
