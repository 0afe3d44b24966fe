#!/usr/bin/env bash
# The frameworks proof on one H200 (about 3-5 minutes): executes notebooks/frameworks_gpu.ipynb
# (%%gpuprofile over HF Trainer and Lightning training of one small GPT-2, fp32 and a bf16
# variant with per-sample tokenization) and brings back the executed notebook and run metadata.
#   usage: bash benchmarks/frameworks_gpu_check.sh OUTDIR [WHEELS_DIR]
# WHEELS_DIR: wheels for an offline host (transformers, lightning, accelerate and their pure
# Python dependencies), installed with --no-index --no-deps into a private site folder.
set -u -o pipefail
OUT=${1:?usage: frameworks_gpu_check.sh OUTDIR [WHEELS_DIR]}
WHEELS=${2:-}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if [ -n "$WHEELS" ]; then
  site=$(mktemp -d)
  $PY -m pip install -q --no-index --no-deps --target "$site" "$WHEELS"/*.whl
  export PYTHONPATH="$site:$repo${PYTHONPATH:+:$PYTHONPATH}"
else
  export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
fi
date -u
nvidia-smi --query-gpu=name,driver_version --format=csv || true
$PY -c "import torch, transformers, lightning; print('torch', torch.__version__, 'transformers', transformers.__version__, 'lightning', lightning.__version__, 'gpu', torch.cuda.get_device_name(0), 'cpus', __import__('os').cpu_count())" || exit 1
cd "$repo"
$PY benchmarks/make_frameworks_notebook.py
t0=$(date +%s)
(cd notebooks && timeout 380 $PY -m nbconvert --to notebook --execute frameworks_gpu.ipynb \
  --ExecutePreprocessor.timeout=240 --allow-errors --output-dir "$OUT" --output frameworks_gpu.ipynb)
echo "notebook rc=$? in $(( $(date +%s) - t0 )) s"
# run folders: metadata and summaries (traces stay behind: too big to bring back)
(cd notebooks/.gpuprof && tar -cf "$OUT/framework_runs.tar" --exclude='*.json.gz' runs) || true
$PY - "$OUT/frameworks_gpu.ipynb" <<'PYEOF'
import json, sys
nb = json.load(open(sys.argv[1]))
for cell in nb["cells"]:
    for out in cell.get("outputs", []):
        text = out.get("text") or "".join(out.get("data", {}).get("text/plain", ""))
        if out.get("output_type") == "error":
            print("ERROR:", out.get("ename"), out.get("evalue"))
        elif text and ("verdict" in text or "ms/step" in text or "ran " in text):
            print("".join(text)[-1500:])
PYEOF
ls -la "$OUT"
date -u
