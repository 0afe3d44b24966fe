#!/usr/bin/env bash
# 2-GPU proof for the cross-rank analysis: three DDP variants of benchmarks/ddp_workload.py
# captured unmodified through `jupyter gpuprof run -- torchrun --nproc-per-node 2 …`, each
# analysed with `jupyter gpuprof analyze <run> --json`; prints verdicts, per-rank figures and
# timings, and checks each verdict: comm -> comm; balanced -> neither comm nor straggler;
# straggler (1.5x batch on rank 1) -> straggler naming rank 1, more GPU work.
#
#   OUT=ddp_out bash benchmarks/ddp_gpu_check.sh
#
# Needs 2 CUDA GPUs and python with torch, pandas, numpy, msgspec. About 2 minutes.
# Leaves in $OUT: ddp_runs.tar.gz (runs/: the three run folders with traces, meta and
# summary.json; logs/: each capture's console), <variant>.summary.json and check.txt.
# Exit code 0 when every check passed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
OUT="${OUT:-$repo/ddp_check_out}"
PY="${PYTHON:-python3}"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$OUT/logs"
cd "$repo"

"$PY" -c "import torch, sys; n = torch.cuda.device_count(); sys.exit(0 if n >= 2 else f'ddp-check: needs 2 CUDA GPUs, torch sees {n}')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$PY" -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version())"
if command -v torchrun >/dev/null; then TORCHRUN=(torchrun); else TORCHRUN=("$PY" -m torch.distributed.run); fi

rc=0
: > "$OUT/check.txt"
for variant in comm balanced straggler; do
  t0=$(date +%s.%N)
  set +e
  "$PY" -m jupyter_gpuprof run --runs-root "$OUT/runs" --name "ddp_$variant" \
      --steps 10 --warmup 3 --active 5 -- \
      "${TORCHRUN[@]}" --nproc-per-node 2 benchmarks/ddp_workload.py --variant "$variant" \
      --iters 30 > "$OUT/logs/$variant.log" 2>&1
  run_rc=$?
  set -e
  t1=$(date +%s.%N)
  run_dir="$(ls -d "$OUT"/runs/*-ddp_"$variant" 2>/dev/null | tail -1)"
  if [ "$run_rc" -ne 0 ] || [ -z "$run_dir" ]; then
    echo "ddp-check: $variant: capture failed (exit $run_rc); last lines of its log:" | tee -a "$OUT/check.txt"
    tail -20 "$OUT/logs/$variant.log"
    rc=1
    continue
  fi
  "$PY" -m jupyter_gpuprof analyze "$run_dir" --json > "$OUT/$variant.summary.json"
  t2=$(date +%s.%N)
  "$PY" - "$variant" "$OUT/$variant.summary.json" "$t0" "$t1" "$t2" <<'PY' | tee -a "$OUT/check.txt" || rc=1
import json, sys
variant, path, t0, t1, t2 = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
s = json.load(open(path))
v, d = s["verdict"], s.get("distributed") or {}
f = {x["id"]: x for x in s["findings"]}
print(f"== {variant}: capture {t1 - t0:.1f} s, analyze {t2 - t1:.1f} s; verdict {v['category']} "
      f"({v['confidence']}): {v['summary']}")
for r in d.get("ranks", []):
    print(f"   rank {r['rank']}: step {r['step_ms']:.1f} ms, compute {r['compute_ms']:.1f}, comm "
          f"{r['comm_ms']:.1f} (exposed {r['exposed_comm_ms']:.1f}, waiting {r['wait_ms']:.1f}, "
          f"exposed transfer {r['exposed_transfer_ms']:.1f}), idle {r['idle_ms']:.1f}, extra "
          f"{r['extra_ms']:.1f} {r['phase'] or ''}")
st = f.get("straggler", {}).get("data", {})
ok = {"comm": v["category"] == "comm",
      "balanced": v["category"] not in ("comm", "straggler"),
      "straggler": v["category"] == "straggler" and st.get("rank") == 1
                   and st.get("phase") == "gpu_work"}[variant]
print(f"   check {variant}: {'PASS' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
done
tail -n 3 "$OUT"/logs/*.log
tar czf "$OUT/ddp_runs.tar.gz" -C "$OUT" runs logs && rm -rf "$OUT/runs" "$OUT/logs"
ls -la "$OUT"
echo "ddp-check: exit $rc"
exit "$rc"
