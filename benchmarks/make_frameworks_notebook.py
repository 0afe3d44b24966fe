"""Writes notebooks/frameworks_gpu.ipynb: %%gpuprofile over HF Trainer and Lightning training.

The same small GPT-2 (benchmarks/frameworks_gpu.py) is trained by each framework in fp32
(expected verdict `precision`, with the fix in that framework's terms) and in bf16 with a
dataloader that tokenizes each sample in the main process (expected `input`). Each fix is then
applied by hand and timed with the framework's own logged throughput. Executed headlessly on
the GPU (benchmarks/frameworks_gpu_check.sh) and committed with its outputs.
    python benchmarks/make_frameworks_notebook.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from make_gpu_notebook import python3_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "frameworks_gpu.ipynb"
STEPS = 60

#: (name, expected verdict, framework, how it is built, the fix applied by hand)
CASES = [
    # Lightning first: its start-up reads torch.get_float32_matmul_precision(), which torch 2.9+
    # refuses once TF32 was set through the legacy flags (HF's tf32=True does that).
    ("pl_fp32", "precision", "lightning", "fw.lightning_parts(STEPS)",
     "fw.lightning_parts(STEPS, precision='bf16-mixed')"),
    ("pl_text", "input", "lightning",
     "fw.lightning_parts(STEPS, data='text', precision='bf16-mixed')",
     "fw.lightning_parts(STEPS, data='text', precision='bf16-mixed', num_workers=8)"),
    ("hf_fp32", "precision", "transformers", "fw.hf_trainer(STEPS)",
     "fw.hf_trainer(STEPS, bf16=True, tf32=True)"),
    ("hf_text", "input", "transformers", "fw.hf_trainer(STEPS, data='text', bf16=True)",
     "fw.hf_trainer(STEPS, data='text', bf16=True, dataloader_num_workers=8)"),
]


def _train_cell(name: str, framework: str, build: str) -> str:
    """A cell that trains unprofiled and keeps the framework's own ms per step."""
    if framework == "transformers":
        return f"out = {build}.train()\nlogged[{name!r}] = fw.hf_step_ms(out.metrics)"
    return (f"trainer, module, loader, timer = {build}\ntrainer.fit(module, loader)\n"
            f"logged[{name!r}] = fw.lightning_step_ms(timer, STEPS)")


def _profiled_cells(name: str, framework: str, build: str) -> list[nbformat.NotebookNode]:
    """Build the trainer in one cell, profile the training call alone in the next."""
    if framework == "transformers":
        return [new_code_cell(f"trainer = {build}"),
                new_code_cell(f"%%gpuprofile --name {name} -o r_{name}\ntrainer.train()")]
    return [new_code_cell(f"trainer, module, loader, timer = {build}"),
            new_code_cell(f"%%gpuprofile --name {name} -o r_{name}\n"
                          "trainer.fit(module, loader)")]


def build() -> nbformat.NotebookNode:
    """The notebook: set-up, four profiled trainings with their fixes, then the table."""
    cells = [
        new_markdown_cell(
            "# `%%gpuprofile` over the HF Trainer and Lightning (NVIDIA H200)\n\n"
            "A cell that calls `trainer.train()` or `trainer.fit(...)` has no loop of its own: "
            "the magic counts the optimizer steps of its first run, sees a training loop and "
            "runs it **once**, with warm-up, baseline and profiler laid over its own steps. "
            "The same small GPT-2 (random weights, offline) is trained four ways; each report's "
            "fix is written in the framework's terms, then applied by hand and timed with the "
            "framework's own logged throughput (HF `train_samples_per_second`, Lightning's "
            "`Timer` callback)."),
        new_code_cell(
            "import sys, pathlib, warnings, logging\n"
            "sys.path.insert(0, str(pathlib.Path.cwd().parent / 'benchmarks'))\n"
            "warnings.filterwarnings('ignore')\n"
            "logging.getLogger('lightning.pytorch').setLevel(logging.ERROR)\n"
            "import torch\n"
            "import frameworks_gpu as fw\n"
            "from transformers.utils import logging as hf_logging\n"
            "hf_logging.set_verbosity_error()\n"
            "assert torch.cuda.is_available() or fw.TINY, 'this notebook needs a CUDA GPU'\n"
            "print(torch.__version__, torch.cuda.get_device_name(0) if not fw.TINY else 'CPU')\n"
            f"STEPS = {STEPS}\n"
            "logged, fixed = {}, {}\n"
            "%load_ext jupyter_gpuprof"),
    ]
    for name, expected, framework, make, fix in CASES:
        cells.append(new_markdown_cell(
            f"## `{name}`: {framework}, expected verdict `{expected}`"))
        cells += _profiled_cells(name, framework, make)
        cells.append(new_code_cell(
            f"v = r_{name}.verdict\nprint('verdict:', v.category, '-', v.summary)\n"
            f"top = r_{name}.advice.findings[0] if r_{name}.advice.findings else None\n"
            "print('fix:'); print(top.fix if top else '(none)')\n"
            f"print(r_{name}.meta.training)"))
        cells.append(new_code_cell(
            "# the same training unprofiled, then with the fix: the framework's own timing\n"
            + _train_cell(name, framework, make) + "\n"
            + _train_cell(name, framework, fix).replace("logged[", "fixed[")
            + f"\nbefore, after = logged[{name!r}], fixed[{name!r}]\n"
            "print(f'{before:.1f} ms/step -> {after:.1f} ms/step with the fix')"))
    expected = {name: exp for name, exp, *_ in CASES}
    cells += [
        new_markdown_cell("## Verdicts, step times and the framework's own throughput"),
        new_code_cell(
            "import pandas as pd\n"
            f"expected = {expected!r}\n"
            "rows = []\n"
            "for n, exp in expected.items():\n"
            "    r = globals()[f'r_{n}']\n"
            "    j = r.to_json()\n"
            "    rows.append({'run': n, 'expected': exp, 'verdict': j['verdict']['category'],\n"
            "                 'confidence': j['verdict']['confidence'],\n"
            "                 'report_median_ms': round(fw.median_step_ms(r), 1),\n"
            "                 'framework_logged_ms': round(logged[n], 1),\n"
            "                 'with_fix_ms': round(fixed[n], 1),\n"
            "                 'fix_speedup': round(logged[n] / fixed[n], 2),\n"
            "                 'steps_seen': r.meta.training.get('optimizer_steps')})\n"
            "table = pd.DataFrame(rows)\n"
            "print(table.to_string(index=False))\n"
            "if not fw.TINY:\n"
            "    assert (table['verdict'] == table['expected']).all(), 'a verdict is off'"),
    ]
    return python3_notebook(cells)


if __name__ == "__main__":
    OUT.parent.mkdir(exist_ok=True)
    nbformat.write(build(), OUT)
    print(f"wrote {OUT}")
