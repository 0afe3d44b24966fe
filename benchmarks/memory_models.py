"""The models and steps the memory benchmarks record and measure, with each memory fix applicable.

Shared by `memory_history_gpu.py` (the recorded histories) and `memory_acceptance_gpu.py` (the
acceptance measurements): a Hugging Face GPT-2 and a Llama-style model (random init, no
download), trained on random tokens with AdamW; a step takes the fixes of
`jupyter_gpuprof.advice.memory_fixes` applied by hand (checkpointing, bf16 autocast, k
micro-batches with gradient accumulation, set_to_none).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

#: the acceptance's shapes of each model; `QUICK`: tiny shapes for a CPU check
SIZES = {
    "gpt2": {"layers": 12, "hidden": 768, "heads": 12},
    "llama": {"layers": 8, "hidden": 1024, "heads": 16},
}
QUICK = {"layers": 2, "hidden": 64, "heads": 4}


def gpt2(layers: int = 6, hidden: int = 768, heads: int = 12, device: str = "cuda") -> Any:
    """A Hugging Face GPT-2 with fp32 weights (vocabulary 50,257, 1,024 positions)."""
    from transformers import GPT2Config, GPT2LMHeadModel

    cfg = GPT2Config(n_layer=layers, n_embd=hidden, n_head=heads, n_positions=1024,
                     use_cache=False)
    with torch.device(device):  # initialised where it trains: seconds less per process
        return GPT2LMHeadModel(cfg)


def llama(layers: int = 8, hidden: int = 1024, heads: int = 16, device: str = "cuda") -> Any:
    """A Llama-style model from `LlamaConfig`, random init (vocabulary 32,000)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=32_000, hidden_size=hidden, intermediate_size=hidden * 11 // 4,
                      num_hidden_layers=layers, num_attention_heads=heads,
                      num_key_value_heads=heads, max_position_embeddings=1024, use_cache=False)
    with torch.device(device):
        return LlamaForCausalLM(cfg)


BUILDERS: dict[str, Callable[..., Any]] = {"gpt2": gpt2, "llama": llama}


@dataclass
class StepSpec:
    """One training step: the model, the batch, and the fixes applied by hand."""

    model: str = "gpt2"
    batch: int = 8
    seq: int = 1024
    quick: bool = False  # tiny shapes, CPU
    checkpointing: bool = False
    autocast: bool = False
    micro_batches: int = 1
    set_to_none: bool = True

    @property
    def device(self) -> str:
        return "cpu" if self.quick else "cuda"


def build(spec: StepSpec) -> tuple[Any, Any, Callable[[], None]]:
    """The model, its AdamW optimizer and one training step with the spec's fixes."""
    torch.manual_seed(0)
    sizes = QUICK if spec.quick else SIZES[spec.model]
    model = BUILDERS[spec.model](**sizes, device=spec.device)
    model.train()
    if spec.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, model.config.vocab_size, (spec.batch, spec.seq), device=spec.device)
    chunks = x.chunk(spec.micro_batches) if spec.micro_batches > 1 else (x,)

    def step() -> None:
        for c in chunks:
            ctx = (torch.autocast(spec.device, dtype=torch.bfloat16) if spec.autocast
                   else contextlib.nullcontext())
            with ctx:
                loss = model(c, labels=c).loss
            (loss / len(chunks)).backward()
        opt.step()
        opt.zero_grad(set_to_none=spec.set_to_none)

    return model, opt, step


def sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def timed_steps(step: Callable[[], None], n: int, device: str) -> list[float]:
    """Each step's wall time (ms), the GPU synchronised after each."""
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        sync(device)
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def plain_peak(spec: StepSpec, warmup: int = 2,
               steps: int = 4) -> tuple[dict[str, Any], Callable[[], None]]:
    """A plain run (no capture): max_memory_allocated / max_memory_reserved over `steps` after
    the warm-up, and the median step time; the step, to measure more with."""
    _, _, step = build(spec)
    timed_steps(step, warmup, spec.device)
    cuda = spec.device == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    ms = timed_steps(step, steps, spec.device)
    return {"max_memory_allocated": torch.cuda.max_memory_allocated() if cuda else None,
            "max_memory_reserved": torch.cuda.max_memory_reserved() if cuda else None,
            "step_ms": ms, "median_ms": statistics.median(ms)}, step


def history_overhead(step: Callable[[], None], device: str, blocks: int = 4,
                     per_block: int = 3) -> dict[str, Any]:
    """Step time with the allocator history recording (the capture's own call) against without,
    in interleaved blocks (off, on, off, on…): each block's median, then the medians'."""
    from jupyter_gpuprof.capture.memory_record import MAX_ENTRIES, TorchMemoryApi

    api = TorchMemoryApi()
    on: list[float] = []
    off: list[float] = []
    for _ in range(blocks):
        off.append(statistics.median(timed_steps(step, per_block, device)))
        if device == "cuda":
            api.record(MAX_ENTRIES)
        on.append(statistics.median(timed_steps(step, per_block, device)))
        if device == "cuda":
            api.stop()
    return {"off_ms": off, "on_ms": on, "blocks": blocks, "per_block": per_block,
            "recorded": device == "cuda"}
