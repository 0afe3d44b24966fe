#!/usr/bin/env bash
# Runs check_notebook7.mjs against a fresh `jupyter notebook` (Notebook 7) server on port 8899,
# with notebooks/quickstart.ipynb copied into a temporary root. Needs `pip install notebook`.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
root=$(mktemp -d)
cp "$repo/notebooks/quickstart.ipynb" "$root/"
jupyter notebook --no-browser --allow-root --port 8899 --port-retries 0 \
  --IdentityProvider.token= --ServerApp.disable_check_xsrf=True --ServerApp.root_dir="$root" \
  > "$root/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 60); do curl -sf http://127.0.0.1:8899/api >/dev/null && break; sleep 1; done
cd "$repo/ui-tests" && node "$here/check_notebook7.mjs" http://127.0.0.1:8899 quickstart.ipynb \
  "${1:-$root/notebook7.png}"
