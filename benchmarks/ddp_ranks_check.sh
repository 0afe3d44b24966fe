#!/usr/bin/env bash
# 2-GPU proof of the rank options: `--ranks 1` (only rank 1 captures) and `--ncu-rank 1` (a short
# Nsight Compute window on rank 1 while rank 0 trains untouched) on the DDP workload over NCCL.
#   OUT=ranks_out bash benchmarks/ddp_ranks_check.sh        (~2 minutes; needs ncu on PATH)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
OUT="${OUT:-$repo/ranks_check_out}"
PY="${PYTHON:-python3}"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
mkdir -p "$OUT/runs"
cd "$repo"
TR=("$PY" -m torch.distributed.run --standalone --nproc-per-node 2)
t0=$(date +%s)
timeout 150 "$PY" -m jupyter_gpuprof run --runs-root "$OUT/runs" --name ranks1 --ranks 1 \
  -- "${TR[@]}" benchmarks/ddp_workload.py --variant balanced 2>&1 | tail -25
echo "ranks-1 rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
t0=$(date +%s)
timeout 240 "$PY" -m jupyter_gpuprof run --runs-root "$OUT/runs" --name ncu1 --ranks none \
  --ncu-rank 1 --ncu-args="-k regex:^(?!nccl) -c 5" \
  -- "${TR[@]}" benchmarks/ddp_workload.py --variant balanced 2>&1 | tail -40
echo "ncu-rank-1 rc=${PIPESTATUS[0]} in $(( $(date +%s) - t0 )) s"
for d in "$OUT"/runs/*; do echo "== $d"; ls "$d" "$d/ncu" 2>/dev/null; done
(cd "$OUT" && tar -czf ranks_runs.tar.gz runs && rm -rf runs)
