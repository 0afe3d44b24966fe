"""The autocast replay checked on a CPU against the H200's measured autocast savings.

    python benchmarks/autocast_replay_cpu.py gpt2|llama

Builds the acceptance's model (`memory_models.py`: GPT-2 12 layers / Llama-style 8 layers,
sequence 1,024, fp32), runs one forward at batch 1 and at batch 2, walks each loss's autograd
graph as the capture does (`capture/autograd_graph.py`) and replays it under CUDA autocast's
rules (`analysis/autocast_dtypes.py`). The saving is linear in the batch (activations) plus a
constant (the weights' bf16 copies), so batch 8's is batch 1's + 7 × the difference. GPT-2 runs
with attention dropout off, so that the CPU's scaled-dot-product attention takes its flash path,
which saves what CUDA's memory-efficient kernel saves (q, k, v, output, logsumexp; its dropout
keeps a seed, no mask). Prints the extrapolated saving and the fp32 saved bytes (against the
H200 capture's saved activations at the peak, `tests/data/memory/acceptance_h200.json`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from memory_models import SIZES, llama  # noqa: E402

from jupyter_gpuprof.analysis.autocast_dtypes import autocast_saving, from_records  # noqa: E402
from jupyter_gpuprof.capture.autograd_graph import graph_nodes  # noqa: E402

BATCH, SEQ = 8, 1024


def model(name: str) -> torch.nn.Module:
    torch.manual_seed(0)
    if name == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        s = SIZES["gpt2"]
        return GPT2LMHeadModel(GPT2Config(n_layer=s["layers"], n_embd=s["hidden"],
                                          n_head=s["heads"], n_positions=SEQ, use_cache=False,
                                          attn_pdrop=0.0))
    return llama(**SIZES["llama"], device="cpu")


def main(name: str) -> int:
    m = model(name)
    m.train()
    vocab = m.config.vocab_size
    res = {}
    for b in (1, 2):
        x = torch.randint(0, vocab, (b, SEQ))
        res[b] = autocast_saving(from_records(graph_nodes(m(x, labels=x).loss)))
    s1, s2 = res[1][0] - res[1][1], res[2][0] - res[2][1]
    saved = res[1][0] + (BATCH - 1) * (res[2][0] - res[1][0])
    print(f"{name}: autocast saves {(s1 + (BATCH - 1) * (s2 - s1)) / 1e9:.3f} GB at batch {BATCH}"
          f" (fp32 saved {saved / 1e9:.3f} GB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "gpt2"))
