#!/usr/bin/env bash
# GPU proof for %ncu (no IPython needed): op replay of the top 3 kernels of a TinyGPT step,
# the NVTX-filtered subprocess mode, a regenerated 3-kernel `--set full --clock-control none`
# report with its raw/details CSV exports, the push/pop-filter explanation, and timings.
#
#   OUT=ncu_out PYTHONPATH=$PWD bash benchmarks/ncu_gpu_check.sh
#
# Needs: an NVIDIA GPU, ncu on PATH (or JUPYTER_GPUPROF_NCU), python with torch (CUDA), pandas,
# numpy and msgspec. Runs in about 2-3 minutes. Exit code 0 when every check passed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"
OUT="${OUT:-$repo/ncu_check_out}"
export OUT PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
PY="${PYTHON:-python3}"
mkdir -p "$OUT"

ncu_bin="${JUPYTER_GPUPROF_NCU:-$(command -v ncu || true)}"
if [ -z "$ncu_bin" ]; then
  echo "ncu-check: ncu not found: put Nsight Compute's ncu on PATH or set JUPYTER_GPUPROF_NCU" >&2
  exit 2
fi
missing="$("$PY" - <<'PY'
import importlib.util
print(" ".join(m for m in ("torch", "pandas", "numpy", "msgspec") if importlib.util.find_spec(m) is None))
PY
)"
if [ -n "$missing" ]; then
  echo "ncu-check: missing Python packages: $missing (install them or carry their wheels)" >&2
  exit 2
fi
"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'ncu-check: torch sees no CUDA GPU')"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$ncu_bin" --version | tail -1

start=$(date +%s)
set +e
"$PY" "$here/ncu_gpu_check.py" 2>&1 | tee "$OUT/ncu_gpu_check.log"
rc=${PIPESTATUS[0]}
set -e
echo "ncu-check: total $(( $(date +%s) - start )) s, exit $rc; files in $OUT:"
ls -la "$OUT"
exit "$rc"
