#!/usr/bin/env bash
# `jupyter gpuprof run --try checkpoint,amp` on one GPU (a few minutes): the memory fixes'
# predicted saving against the measured one (peak over the timed steps, against the control)
# and their step time, on GPT-2 (Hugging Face checkpointing) and on a ModuleList of MLP blocks
# (the layers wrapped in torch.utils.checkpoint); benchmarks/train_memory_layers.py.
#   usage: bash benchmarks/try_memory_gpu.sh OUTDIR     (torch, transformers, msgspec importable)
set -u -o pipefail
source "$(dirname "$0")/gpu_script_env.sh" "${1:-}" try_memory_gpu.sh
FLAGS=(--steps 6 --warmup 3 --wait 0 --prof-warmup 1 --active 2)
for model in layers gpt2; do
  t0=$(date +%s)
  $PY -m jupyter_gpuprof run --runs-root "$OUT/runs_$model" --name "memory-$model" "${FLAGS[@]}" \
    --try checkpoint,amp -- $PY benchmarks/train_memory_layers.py "$model" 30 \
    > "$OUT/$model.txt" 2> "$OUT/$model.err"
  echo "$model: run --try rc=$? in $(( $(date +%s) - t0 )) s"
  grep -A1 -E "^  - (activation checkpointing|bf16 activations)" "$OUT/$model.txt"
  grep -E "^  (checkpoint|amp) " "$OUT/$model.txt"
  cp "$OUT"/runs_"$model"/*/summary.json "$OUT/$model.summary.json" 2>/dev/null
done
