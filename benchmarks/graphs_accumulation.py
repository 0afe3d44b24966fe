"""Which CUDA-graph recipe keeps a gradient-accumulation step right: crashes and gradients.

`torch.compile(mode="reduce-overhead")` replays its graphs from a memory pool it reuses; the
gradients of the first micro-batch are the backward graph's outputs, which `.grad` keeps, and
the next micro-batch's replay may overwrite them. This script runs the same small transformer
step (weight-tied embedding, as nanoGPT) eagerly and under each recipe, with 1 and 4
micro-batches, and prints for each: whether it ran, the largest gradient difference from
eager after 3 optimizer steps, and the median step time.

    python benchmarks/graphs_accumulation.py [--out results.json]   (a CUDA GPU)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

VOCAB, DIM, SEQ, BATCH, LAYERS = 512, 256, 64, 16, 4
STEPS, TIMED = 3, 20


class TinyGPT(nn.Module):
    """Embedding tied to the head, pre-norm MLP blocks: the shape of nanoGPT's step."""

    def __init__(self) -> None:
        super().__init__()
        self.wte = nn.Embedding(VOCAB, DIM)
        self.blocks = nn.ModuleList(nn.Sequential(nn.LayerNorm(DIM), nn.Linear(DIM, 4 * DIM),
                                                  nn.GELU(), nn.Linear(4 * DIM, DIM))
                                    for _ in range(LAYERS))
        self.head = nn.Linear(DIM, VOCAB, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.wte(idx)
        for b in self.blocks:
            x = x + b(x)
        return F.cross_entropy(self.head(x).view(-1, VOCAB), targets.view(-1))


def batches(n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator(device="cuda").manual_seed(1)
    return [(torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda", generator=g),
             torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda", generator=g))
            for _ in range(n)]


def train(recipe: str, accum: int) -> tuple[list[torch.Tensor], list[float]]:
    """The gradients after STEPS optimizer steps and the times of TIMED more."""
    torch.manual_seed(0)
    torch._dynamo.reset()
    model = TinyGPT().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    if recipe == "compile":
        model = torch.compile(model)
    elif recipe.startswith("reduce-overhead"):
        model = torch.compile(model, mode="reduce-overhead")
    mark = torch.compiler.cudagraph_mark_step_begin
    data = batches(accum * (STEPS + TIMED))

    def step(i: int) -> None:
        opt.zero_grad(set_to_none=True)
        if recipe == "reduce-overhead+mark-per-step":
            mark()
        for m in range(accum):
            if recipe == "reduce-overhead+mark-per-micro-batch":
                mark()
            x, y = data[i * accum + m]
            (model(x, y) / accum).backward()

    for i in range(STEPS - 1):
        step(i)
        opt.step()
    step(STEPS - 1)
    grads = [p.grad.detach().clone() for p in opt.param_groups[0]["params"]]
    opt.step()
    times = []
    for i in range(STEPS, STEPS + TIMED):
        torch.cuda.synchronize()
        t = time.perf_counter()
        step(i)
        opt.step()
        torch.cuda.synchronize()
        times.append(1e3 * (time.perf_counter() - t))
    return grads, times


RECIPES = ("eager", "compile", "reduce-overhead", "reduce-overhead+mark-per-step",
           "reduce-overhead+mark-per-micro-batch", "reduce-overhead+legacy-graphs")


def run(recipe: str, accum: int, eager: list[torch.Tensor] | None) -> dict[str, Any]:
    legacy = recipe.endswith("legacy-graphs")
    torch._inductor.config.triton.cudagraph_trees = not legacy
    try:
        grads, times = train(recipe, accum)
    except Exception as e:  # noqa: BLE001 - a crash is this recipe's result
        return {"recipe": recipe, "accum": accum, "error": f"{type(e).__name__}: {e}"[:300]}
    finally:
        torch._inductor.config.triton.cudagraph_trees = True
    out: dict[str, Any] = {"recipe": recipe, "accum": accum,
                           "median_ms": round(statistics.median(times), 3)}
    if eager is not None:
        out["grad_max_rel_diff"] = max(
            float((g - e).abs().max() / e.abs().max().clamp_min(1e-12))
            for g, e in zip(grads, eager, strict=True))
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    results = []
    for accum in (1, 4):
        eager, _ = train("eager", accum)
        for recipe in RECIPES:
            r = run(recipe, accum, eager)
            results.append(r)
            print(json.dumps(r), flush=True)
    doc = {"torch": torch.__version__, "gpu": torch.cuda.get_device_name(0), "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
