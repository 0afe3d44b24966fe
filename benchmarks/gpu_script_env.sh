# Sourced by the GPU-host scripts that run `jupyter gpuprof run`: OUT made absolute, the
# checkout first on PYTHONPATH, Hugging Face offline, unbuffered Python, $PY the interpreter.
#   usage (in a script): source "$(dirname "$0")/gpu_script_env.sh" "$1" NAME.sh
OUT=${1:?usage: $2 OUTDIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PYTHON:-python3}
