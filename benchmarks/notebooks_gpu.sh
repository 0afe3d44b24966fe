#!/usr/bin/env bash
# Re-executes the committed GPU notebooks headlessly on one GPU host and brings them back, so
# the executed copies carry the current widget (state + static fallback) and fresh outputs.
#   usage: bash benchmarks/notebooks_gpu.sh OUTDIR NOTEBOOK.ipynb...   (names under notebooks/)
# The notebook stack and msgspec must be importable (see benchmarks/gpu_core_check.sh).
set -u -o pipefail
OUT=${1:?usage: notebooks_gpu.sh OUTDIR NOTEBOOK...}
shift
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
PY=${PYTHON:-python3}
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv || true
for nb in "$@"; do
  t0=$(date +%s)
  (cd notebooks && timeout 300 $PY -m nbconvert --to notebook --execute "$nb" \
    --ExecutePreprocessor.timeout=240 --allow-errors --output-dir "$OUT" --output "$nb")
  echo "$nb rc=$? in $(( $(date +%s) - t0 )) s"
  $PY - "$OUT/$nb" <<'PYEOF'
import json, sys
nb = json.load(open(sys.argv[1]))
errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
views = sum("application/vnd.jupyter.widget-view+json" in o.get("data", {})
            for c in nb["cells"] for o in c.get("outputs", []))
print(f"  {len(errors)} error output(s), {views} widget view(s)")
for o in errors:
    print("  ERROR:", o.get("ename"), str(o.get("evalue"))[:300])
PYEOF
done
date -u
