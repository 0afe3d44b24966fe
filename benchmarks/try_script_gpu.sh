#!/usr/bin/env bash
# `jupyter gpuprof run --try` on one GPU (about 2 minutes): a plain BERT fp32 training script
# (benchmarks/train_bert_fp32.py) captured once, then re-run once per fix (tf32, amp, graphs);
# brings back the report with its tries as text and JSON, and the run folder without its trace.
#   usage: bash benchmarks/try_script_gpu.sh OUTDIR     (torch, transformers, msgspec importable)
set -u -o pipefail
source "$(dirname "$0")/gpu_script_env.sh" "${1:-}" try_script_gpu.sh
date -u
t0=$(date +%s)
$PY -m jupyter_gpuprof run --runs-root "$OUT/runs" --name bert-fp32-script --try tf32,amp,graphs \
  -- $PY benchmarks/train_bert_fp32.py 80 > "$OUT/run_try.txt" 2> "$OUT/run_try.err"
echo "run --try rc=$? in $(( $(date +%s) - t0 )) s"
tail -25 "$OUT/run_try.txt"
grep "^gpuprof:" "$OUT/run_try.err"
$PY -m jupyter_gpuprof analyze "$OUT"/runs/*/ --json > "$OUT/run_try.json" 2>/dev/null || true
(cd "$OUT" && tar -cf runs.tar --exclude='*.json.gz' runs && rm -rf runs)
date -u
