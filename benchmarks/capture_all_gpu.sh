#!/usr/bin/env bash
# Everything in benchmarks/ that needs a GPU, in one go (about 5-6 minutes on one H200):
# the eight workload traces (packed as OUTDIR/real_workloads.tar: unpack into tests/data/)
# and the 40-step GPT-2 trace (split into <=15 MiB parts: cat OUTDIR/gpt2.gz.part-* > FILE).
#   usage: bash benchmarks/capture_all_gpu.sh OUTDIR
#   env:   CAPTURE_ARGS / BIG_ARGS add arguments (e.g. BIG_ARGS=--tiny for a CPU check);
#          SKIP_BIG=1 skips the GPT-2 trace; WORKLOADS_TIMEOUT (s, default 450)
set -u -o pipefail
OUT=${1:?usage: capture_all_gpu.sh OUTDIR}
WORK=$(mktemp -d)
export PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
date -u
nvidia-smi || true
$PY -c "import torch,sys,platform;print('torch',torch.__version__,'cuda',torch.version.cuda,'python',platform.python_version(),'gpu',torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, 'cpus', __import__('os').cpu_count())"
t0=$(date +%s)
timeout ${WORKLOADS_TIMEOUT:-450} $PY benchmarks/capture_workloads.py --out "$WORK/real" ${CAPTURE_ARGS:-}
echo "workloads rc=$? in $(( $(date +%s) - t0 )) s"
tar -C "$WORK" -cf "$OUT/real_workloads.tar" real
[ -n "${SKIP_BIG:-}" ] && { ls -la "$OUT"; date -u; exit 0; }
t0=$(date +%s)
timeout 220 $PY benchmarks/make_big_trace.py --out "$WORK/big/gpt2_40steps.pt.trace.json.gz" ${BIG_ARGS:-}
echo "big trace rc=$? in $(( $(date +%s) - t0 )) s"
if [ -f "$WORK/big/gpt2_40steps.pt.trace.json.gz" ]; then
  cp "$WORK/big/gpt2_40steps.pt.trace.json.gz.info.json" "$OUT/gpt2_info.json"
  split -b 15M -d "$WORK/big/gpt2_40steps.pt.trace.json.gz" "$OUT/gpt2.gz.part-"
  sha256sum "$WORK/big/gpt2_40steps.pt.trace.json.gz"
fi
ls -la "$OUT"
date -u
