"""Writes notebooks/try_fixes_gpu.ipynb: `%%gpuprofile --try` on a Hugging Face model.

BERT (6 layers, random weights, nothing downloaded) trained in fp32 with TF32 off: the report
predicts what TF32 and bf16 autocast would save (the what-if model), then `--try amp,tf32`
applies each in the live kernel, measures it like the baseline, restores the model, optimizer
and RNG, and shows measured against predicted, the peak memory and the loss difference.
Executed on the GPU with `bash benchmarks/notebooks_gpu.sh OUT try_fixes_gpu.ipynb`.
    python benchmarks/make_try_notebook.py
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from make_gpu_notebook import python3_notebook
from nbformat.v4 import new_code_cell, new_markdown_cell

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "try_fixes_gpu.ipynb"

SETUP = """\
import torch
from transformers import BertConfig, BertForMaskedLM

assert torch.cuda.is_available(), "this notebook needs a CUDA GPU"
print(torch.__version__, torch.cuda.get_device_name(0))
torch.backends.cuda.matmul.allow_tf32 = False      # full fp32 GEMMs: what an old default gives
torch.manual_seed(0)
cfg = BertConfig(num_hidden_layers=6, hidden_size=768, num_attention_heads=12,
                 intermediate_size=3072, vocab_size=8192, max_position_embeddings=512)
model = BertForMaskedLM(cfg).cuda().train()        # random weights: no download
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, cfg.vocab_size, (16, 256), device="cuda")
%load_ext jupyter_gpuprof"""

STEP = """\
%%gpuprofile --try amp,tf32 --name bert-fp32-try -o r
loss = model(input_ids=ids, labels=ids).loss
loss.backward()
opt.step()
opt.zero_grad(set_to_none=True)"""

CHECK = """\
j = r.to_json()
print("verdict:", j["verdict"]["category"])
for t in j["tries"]:
    ch = t.get("change") or {}
    print(f"{t['fix']:5s} predicted {t.get('predicted_gain_pct')} %, measured "
          f"{t.get('measured_gain_pct')} % ({ch.get('verdict')}), "
          f"loss rel. diff {t.get('loss_rel_diff')}, peak {t.get('peak_memory_bytes')} B")
print("after the tries TF32 is", torch.backends.cuda.matmul.allow_tf32, "(restored)")"""


def build() -> nbformat.NotebookNode:
    """The notebook: setup, the profiled step with its tries, the figures."""
    nb = python3_notebook([
        new_markdown_cell(
            "# Trying the fixes: BERT in fp32 (NVIDIA H200)\n\n"
            "The report predicts each fix's gain from a replay of the step; `--try` then applies "
            "the fixes that need no code change (`amp`, `tf32`) in this kernel, measures each "
            "exactly like the baseline and puts model, optimizer and RNG back."),
        new_code_cell(SETUP),
        new_code_cell(STEP),
        new_markdown_cell("## Measured against predicted"),
        new_code_cell(CHECK),
    ])
    return nb


if __name__ == "__main__":
    nbformat.write(build(), OUT)
    print(f"wrote {OUT}")
