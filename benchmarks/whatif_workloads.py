"""Workloads the what-if benchmark adds to workloads.py: a sync whose symptom is launch gaps, and
third-party models built from `transformers` with random weights (no download).

Each builder returns (Workload, namespace): the namespace names the model and optimizer so
`--try` (tries/notebook.py) can copy and restore them.
"""

from __future__ import annotations

from contextlib import nullcontext

import torch
from workloads import Workload, _seed, _set_fp32_matmul


def build_sync_launch(device: str, fixed: bool = False) -> tuple[Workload, dict]:
    """GPT-2 small (`transformers`, random weights, bf16 autocast, fused AdamW) that logs every
    parameter's grad norm with `.item()`: each of the 148 syncs drains the launch queue, so the
    kernels after it run as fast as the host launches them (launch gaps caused by a sync).
    Fix (what the report proposes): one `torch._foreach_norm` and a single `.item()`."""
    from transformers import GPT2Config, GPT2LMHeadModel

    _seed()
    cfg = GPT2Config(bos_token_id=0, eos_token_id=0)
    model = GPT2LMHeadModel(cfg).to(device).train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (8, 512), device=device)
    named = list(model.named_parameters())
    log: list = []

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        if fixed:
            norms = torch._foreach_norm([p.grad for _, p in named])
            log.append(torch.linalg.vector_norm(torch.stack(norms)).item())
        else:
            log.append({n: p.grad.norm().item() for n, p in named})
        del log[:-100]
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload("sync_launch", step, "transformers GPT-2 small, batch 8x512, bf16 autocast, "
                    f"fused AdamW; {len(named)} grad-norm .item() per step",
                    "sync (symptom: launch gaps)", {"batch": 8, "seq": 512},
                    fix="one torch._foreach_norm, a single .item()" if fixed else None), \
        {"model": model, "opt": opt}


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
    if not fixed:
        _set_fp32_matmul(ieee=True)  # the process default: the original runs without TF32
    cfg = BertConfig(num_hidden_layers=6, hidden_size=768, num_attention_heads=12,
                     intermediate_size=3072, vocab_size=8192, max_position_embeddings=512)
    model = BertForMaskedLM(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (16, 256), device=device)
    step = _hf_step(model, opt, ids, False)
    if fixed:  # TF32 for this step only: timed in alternation with the original
        plain = step

        def step() -> None:
            _set_fp32_matmul(ieee=False)
            try:
                plain()
            finally:
                _set_fp32_matmul(ieee=True)

    return Workload("hf_bert", step, "transformers BERT, 6 layers, "
                    "batch 16x256, fp32, TF32 off", "precision", {"layers": 6},
                    fix="TF32 allowed" if fixed else None), {"model": model, "opt": opt}


def build_llama(device: str, fixed: bool = False) -> tuple[Workload, dict]:
    """A Llama-style model from `transformers` (12 layers, d 1024, random weights) in bf16
    with fused AdamW: over a thousand kernels a step, most of them short (RMSNorm, rotary,
    SiLU chains), so the host's dispatch bounds the step (the GPU is busy under half of it on
    an H200). Fix: the launch finding's short form, `torch.compile(mode="reduce-overhead")`
    (CUDA graphs of forward and backward)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    _seed()
    cfg = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=12,
                      num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                      max_position_embeddings=1024)
    model = LlamaForCausalLM(cfg).to(device, torch.bfloat16).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, cfg.vocab_size, (4, 512), device=device)
    # the step looks the model up by name, as notebook code does: `--try compile` rebinds it
    ns = {"model": torch.compile(model, mode="reduce-overhead") if fixed else model, "opt": opt}

    def step() -> None:
        loss = ns["model"](input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload("llama", step, "transformers Llama-style, 12 layers, d 1024, batch 4x512, "
                    "bf16, fused AdamW", "launch", {"layers": 12, "d": 1024},
                    fix='torch.compile(model, mode="reduce-overhead")' if fixed else None), ns


EXTRA = {"sync_launch": build_sync_launch, "hf_gpt2": build_gpt2, "hf_bert": build_bert,
         "llama": build_llama}
