"""Workloads the what-if benchmark adds to workloads.py: a sync whose symptom is launch gaps, and
third-party models built from `transformers` with random weights (no download).

Each builder returns (Workload, namespace): the namespace names the model and optimizer so
`--try` (capture/try_fixes.py) can copy and restore them.
"""

from __future__ import annotations

from contextlib import nullcontext

import torch
from torch import nn
from torch.nn import functional as F
from workloads import Workload, _seed, _set_fp32_matmul


def build_sync_launch(device: str, fixed: bool = False, layers: int = 24, d: int = 1024,
                      batch: int = 256) -> tuple[Workload, dict]:
    """Per-parameter grad-norm `.item()` logging: each sync drains the launch queue, so the
    kernels after it run as fast as the host launches them (launch gaps caused by a sync)."""
    _seed()
    model = nn.Sequential(*[nn.Linear(d, d) for _ in range(layers)]).to(device, torch.bfloat16)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.randn(batch, d, device=device, dtype=torch.bfloat16)
    params = list(model.parameters())
    log: list[float] = []

    def step() -> None:
        loss = model(x).float().square().mean()
        loss.backward()
        if fixed:  # the fix: the norms stay on the GPU (read every N steps, not every step)
            norms = torch.stack([p.grad.norm() for p in params])
            log.append(norms)
        else:
            for p in params:
                log.append(p.grad.float().norm().item())
        del log[:-1000]
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload("sync_launch", step, f"{layers} bf16 Linear({d}) layers, batch {batch}; "
                    f"{len(params)} grad-norm .item() per step", "sync (symptom: launch gaps)",
                    {"layers": layers, "d": d, "batch": batch},
                    fix="grad norms kept on the GPU" if fixed else None), {"model": model,
                                                                            "opt": opt}


def _hf_step(model, opt, ids, autocast: bool):
    """A training step of a transformers model on fixed tokens (bf16 autocast when asked)."""
    def step() -> None:
        # no autocast context at all when off: `--try amp` wraps the step in its own
        ctx = torch.autocast("cuda", dtype=torch.bfloat16) if autocast else nullcontext()
        with ctx:
            out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def build_gpt2(device: str, fixed: bool = False) -> tuple[Workload, dict]:
    """Hugging Face GPT-2 (6 layers, random weights) trained in fp32 with TF32 off: the GEMMs run
    on SIMT cores. Fix: bf16 autocast."""
    from transformers import GPT2Config, GPT2LMHeadModel

    _seed()
    _set_fp32_matmul(ieee=True)
    cfg = GPT2Config(n_layer=6, n_embd=768, n_head=12, n_positions=512, vocab_size=8192,
                     bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (8, 512), device=device)
    return Workload("hf_gpt2", _hf_step(model, opt, ids, fixed), "transformers GPT-2, 6 layers, "
                    "batch 8x512, fp32, TF32 off", "precision", {"layers": 6},
                    fix="bf16 autocast" if fixed else None), {"model": model, "opt": opt}


def build_bert(device: str, fixed: bool = False) -> tuple[Workload, dict]:
    """Hugging Face BERT (6 layers, random weights), masked-LM step in fp32 with TF32 off.
    Fix: TF32 allowed."""
    from transformers import BertConfig, BertForMaskedLM

    _seed()
    _set_fp32_matmul(ieee=not fixed)
    cfg = BertConfig(num_hidden_layers=6, hidden_size=768, num_attention_heads=12,
                     intermediate_size=3072, vocab_size=8192, max_position_embeddings=512)
    model = BertForMaskedLM(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (16, 256), device=device)
    return Workload("hf_bert", _hf_step(model, opt, ids, False), "transformers BERT, 6 layers, "
                    "batch 16x256, fp32, TF32 off", "precision", {"layers": 6},
                    fix="TF32 allowed" if fixed else None), {"model": model, "opt": opt}


def build_launch_cuda_graph(device: str, fixed: bool = False, blocks: int = 48,
                            d: int = 64) -> tuple[Workload, dict]:
    """Tiny layers whose whole step (forward, backward, optimizer) is captured in one CUDA graph
    when fixed: launches and host dispatch vanish, the step is about GPU busy time."""
    _seed()
    layers: list[nn.Module] = []
    for _ in range(blocks):
        layers += [nn.Linear(d, d), nn.LayerNorm(d)]
    model = nn.Sequential(*layers).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)  # plain SGD: nothing on the CPU
    x = torch.randn(8, d, device=device)

    def eager() -> None:
        loss = F.mse_loss(model(x), x)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)

    if not fixed:
        return Workload("launch_graph", eager, f"{2 * blocks} tiny ops, eager", "launch", {}), \
            {"model": model, "opt": opt}
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            eager()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        eager()
    return Workload("launch_graph", graph.replay, f"{2 * blocks} tiny ops, whole step in one "
                    "CUDA graph", "launch", {}, fix="whole step captured in a CUDA graph"), \
        {"model": model, "opt": opt}


EXTRA = {"sync_launch": build_sync_launch, "hf_gpt2": build_gpt2, "hf_bert": build_bert,
         "launch_graph": build_launch_cuda_graph}
