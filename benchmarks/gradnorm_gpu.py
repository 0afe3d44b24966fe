"""GPU acceptance of the GPT-2 grad-norm case, in under 3 minutes on one H200.

Writes notebooks/gpt2_gradnorm.ipynb (benchmarks/make_gradnorm_notebook.py), executes it in a
fresh kernel, checks that the report names the per-parameter `.item()` line of the profiled
cell and proposes the batched norm, and copies the executed notebook to OUTDIR (commit it as
notebooks/gpt2_gradnorm.ipynb).
    usage: python benchmarks/gradnorm_gpu.py OUTDIR     (notebook stack + transformers + CUDA)
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import nbformat
from make_gradnorm_notebook import ITEM_LINE, OUT, build
from nbclient import NotebookClient

#: whole budget of the run; the kernel is stopped past it
TIMEOUT_S = 170


def finding_of(nb: nbformat.NotebookNode) -> dict:
    """The per-parameter finding of the executed notebook's report (from the widget state)."""
    state = nb.metadata.get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in state.values():
        summary = model.get("state", {}).get("summary")
        if summary:
            return next(f for f in summary["findings"] if f["id"] == "per-parameter-item")
    raise SystemExit("no report widget in the executed notebook")


def main(out_dir: str) -> int:
    """Execute, check, copy; prints the measured figures."""
    t0 = time.time()
    nb = build()
    nbformat.write(nb, OUT)
    client = NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(OUT.parent)}})
    client.execute()
    dest = Path(out_dir) / OUT.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest)
    f = finding_of(nb)
    ok = (f.get("where") or {}).get("code") == ITEM_LINE and "_foreach_norm" in f["fix"]
    print(json.dumps({"seconds": round(time.time() - t0, 1), "ok": ok, "where": f.get("where"),
                      "expected_gain_pct": f["expected_gain_pct"], "cost_ms": f["cost_ms"],
                      "notebook": str(dest)}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    raise SystemExit(main(sys.argv[1]))
