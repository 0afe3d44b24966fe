"""Writes notebooks/gpu_workloads.ipynb: %%gpuprofile on every workload of benchmarks/workloads.py.

The notebook is executed headlessly on the GPU (`jupyter nbconvert --execute`) and committed
with its outputs; its last cell tabulates each workload's verdict against its measured label.
    python benchmarks/make_gpu_notebook.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

WORKLOADS = ["input", "sync", "launch", "precision", "compute", "memory", "transfer", "host"]
OUT = Path(__file__).resolve().parent.parent / "notebooks" / "gpu_workloads.ipynb"


def python3_notebook(cells: list) -> nbformat.NotebookNode:
    """A notebook of `cells` for the default Python 3 kernel (what every GPU notebook runs on)."""
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    # tests/test_notebooks.py executes the cpu ones and reads the gpu ones' calls
    nb.metadata["jupyter_gpuprof"] = {"runs_on": "gpu"}
    return nb


def build() -> nbformat.NotebookNode:
    """The notebook: setup, one profiled cell per workload, then the verdict table."""
    cells = [
        new_markdown_cell(
            "# Eight bottlenecks, eight verdicts (NVIDIA H200)\n\n"
            "Each workload in `benchmarks/workloads.py` was built to have one bottleneck, and its "
            "label was checked on the GPU's own timeline when its reference trace was captured "
            "(`tests/data/real/<name>/meta.json`). Here each one runs under `%%gpuprofile` in a "
            "live kernel: a baseline without the profiler, a short capture, then the verdict."),
        new_code_cell(
            "import sys, pathlib\n"
            "sys.path.insert(0, str(pathlib.Path.cwd().parent / 'benchmarks'))\n"
            "import torch\n"
            "from workloads import build\n"
            "assert torch.cuda.is_available(), 'this notebook needs a CUDA GPU'\n"
            "print(torch.__version__, torch.cuda.get_device_name(0))\n"
            "%load_ext jupyter_gpuprof"),
    ]
    for name in WORKLOADS:
        cells += [
            new_markdown_cell(f"## `{name}`"),
            new_code_cell(f"w = build({name!r}, 'cuda')\nprint(w.description)\n"
                          "for _ in range(3):\n    w.step()\ntorch.cuda.synchronize()"),
            new_code_cell(f"%%gpuprofile --steps 20 --warmup 3 --name {name} -o r_{name}\n"
                          "w.step()"),
        ]
    cells += [
        new_markdown_cell("## Verdicts against the measured labels"),
        new_code_cell(
            "import pandas as pd\n"
            f"names = {WORKLOADS!r}\n"
            "rows = []\n"
            "for n in names:\n"
            "    r = globals()[f'r_{n}']\n"
            "    j = r.to_json()\n"
            "    top = j['findings'][0] if j['findings'] else {}\n"
            "    rows.append({'workload': n, 'verdict': j['verdict']['category'],\n"
            "                 'confidence': j['verdict']['confidence'],\n"
            "                 'median_ms': round(j['steps']['median_ms'], 2),\n"
            "                 'p95_ms': round(j['steps']['p95_ms'], 2),\n"
            "                 'gpu_busy_pct': round(j['gpu']['busy_pct'], 1),\n"
            "                 'top_gain_pct': top.get('expected_gain_pct')})\n"
            "table = pd.DataFrame(rows)\n"
            "table['as_labelled'] = table['verdict'] == table['workload']\n"
            "table"),
        new_code_cell("print(f\"{table['as_labelled'].sum()} of {len(table)} verdicts match\")"),
    ]
    return python3_notebook(cells)


if __name__ == "__main__":
    nbformat.write(build(), OUT)
    print(f"wrote {OUT}")
