#!/usr/bin/env bash
# GPU proof for %ncu plus the large naive-attention GPT-2 trace, in one go (~4 minutes):
# the ncu check (op replay, NVTX-filtered cell, regenerated report + CSVs), the executed
# notebooks/ncu.ipynb, and make_big_trace.py --naive-attention --dropout 0.1 (split into
# <= 15 MiB parts: cat OUTDIR/gpt2n.gz.part-* > FILE).
#   usage: bash benchmarks/gpu_ncu_and_bigtrace.sh OUTDIR     (the notebook stack importable)
set -u -o pipefail
OUT=${1:?usage: gpu_ncu_and_bigtrace.sh OUTDIR}
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
W=$(mktemp -d)
date -u
t0=$(date +%s)
OUT="$W/ncu" timeout 240 bash benchmarks/ncu_gpu_check.sh
echo "ncu check rc=$? in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
(cd notebooks && timeout 200 $PY -m nbconvert --to notebook --execute ncu.ipynb \
  --ExecutePreprocessor.timeout=180 --allow-errors --output-dir "$W/ncu" --output ncu.ipynb)
echo "ncu notebook rc=$? in $(( $(date +%s) - t0 )) s"
tar -C "$W" -cf "$OUT/ncu.tar" ncu
t0=$(date +%s)
timeout 200 $PY benchmarks/make_big_trace.py --out "$W/big/gpt2n.json.gz" --naive-attention \
  --dropout 0.1
echo "big trace rc=$? in $(( $(date +%s) - t0 )) s"
if [ -f "$W/big/gpt2n.json.gz" ]; then
  cp "$W/big/gpt2n.json.gz.info.json" "$OUT/gpt2n_info.json"
  split -b 15M -d "$W/big/gpt2n.json.gz" "$OUT/gpt2n.gz.part-"
  sha256sum "$W/big/gpt2n.json.gz"
fi
ls -la "$OUT"
date -u
