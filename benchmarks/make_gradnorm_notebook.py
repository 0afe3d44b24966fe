"""Writes notebooks/gpt2_gradnorm.ipynb: GPT-2 training that logs every parameter's grad norm.

The case of the report's "user's own code" finding: each step calls `.item()` once per
parameter tensor (148 for GPT-2 small), a host-device sync each. The report must name that
line of the profiled cell and propose one batched `torch._foreach_norm` with a single
`.item()`. GPT-2 small from `transformers` with random weights (nothing is downloaded).
Executed on the GPU by benchmarks/gradnorm_gpu.py and committed with its outputs.
    python benchmarks/make_gradnorm_notebook.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from make_gpu_notebook import python3_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "gpt2_gradnorm.ipynb"
#: the line of the profiled cell the report must name
ITEM_LINE = "norms = {n: p.grad.norm().item() for n, p in model.named_parameters()}"

SETUP = """\
import torch
from transformers import GPT2Config, GPT2LMHeadModel

assert torch.cuda.is_available(), "this notebook needs a CUDA GPU"
print(torch.__version__, torch.cuda.get_device_name(0))
torch.manual_seed(0)
cfg = GPT2Config()                          # GPT-2 small (124M), random weights: no download
model = GPT2LMHeadModel(cfg).cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
B, T = 8, 512
batch = lambda: torch.randint(0, cfg.vocab_size, (B, T), device="cuda")
print(sum(p.numel() for p in model.parameters()) / 1e6, "M parameters,",
      len(list(model.parameters())), "tensors")
%load_ext jupyter_gpuprof"""

STEP = f"""\
%%gpuprofile --steps 10 --warmup 3 --name gpt2-gradnorm -o r
x = batch()
with torch.autocast("cuda", dtype=torch.bfloat16):
    loss = model(x, labels=x).loss
loss.backward()
{ITEM_LINE}
opt.step()
opt.zero_grad(set_to_none=True)"""

CHECK = f"""\
j = r.to_json()
f = next(f for f in j["findings"] if f["id"] == "per-parameter-item")
print(f["title"], "— expected gain ≈", f["expected_gain_pct"], "%")
print("named line:", f["where"])
print(f["fix"])
assert f["where"] is not None and f["where"]["code"] == {ITEM_LINE!r}
assert "_foreach_norm" in f["fix"]
assert not any("fused=True" in g["fix"] for g in j["findings"])  # fused AdamW is in use"""


def build() -> nbformat.NotebookNode:
    """The notebook: setup, the profiled training step, the check of the finding."""
    cells = [
        new_markdown_cell(
            "# GPT-2: per-parameter grad-norm logging (NVIDIA H200)\n\n"
            "A common habit: log every parameter's gradient norm with `.item()` each step. Each "
            "`.item()` waits for the GPU, so the host stops queueing work 148 times a step. The "
            "report below names the line in the profiled cell and proposes one batched norm."),
        new_code_cell(SETUP),
        new_code_cell(STEP),
        new_markdown_cell("## The finding names the line and the batched fix"),
        new_code_cell(CHECK),
    ]
    return python3_notebook(cells)


if __name__ == "__main__":
    nbformat.write(build(), OUT)
    print(f"wrote {OUT}")
