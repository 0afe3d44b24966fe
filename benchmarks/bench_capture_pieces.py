"""What each piece of the capture's baseline costs a host-bound step, switched on and off in turn.

    python benchmarks/bench_capture_pieces.py [--processes 3] [--rounds 40] [--block 20] [--json F]

A host-bound step's speed moves between processes, and within one over a second or two, by more
than the 3 % observer bar (docs/benchmarks.md §21), so whole processes compared against each
other cannot say what a piece of the capture costs. Here one process runs the word LM's shape of
step (bench_observer_within.py: an LSTM language model updated by hand, `.item()` each step, on
the GPU when there is one) in short blocks, each block with one piece of what the capture keeps
running through its baseline switched on, and a block with nothing on in every round beside
them; a piece's cost is the ratio of its block's median step to that plain block's, round by
round (blocks in a rotating order), so the process's own slow wander divides out.

The pieces are the real ones, installed and removed between blocks: `hooks` is the capture's
`backward()` wrapper and optimizer hook (capture/training.py) ending each step on a real
baseline clock (capture/driver.py); `hooks-unstreamed` the same with the clock's CUDA event
recorded without its stream (as before session 45: torch looks the current stream up at each
mark); `sampler` the GPU-conditions thread (capture/conditions.py); `stalls` the DataLoader,
`torch.save`, `Module.train` wrappers and the collector's callback (capture/stalls.py); `all`
every piece at once. Prints each piece's geometric mean ratio with its 95 % t interval over all
rounds of all processes, and the capture's own account of its hook calls (capture_cost.py).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
from bench_observer_within import _loop  # noqa: E402 - the word LM's shape of step
from observer_concurrent import pooled  # noqa: E402 - geometric mean and its t interval

PIECES = ("hooks", "hooks-unstreamed", "sampler", "sampler-0.1s", "stalls", "all")


def _gpt_loop(device: str) -> Any:
    """One step of minGPT's adder's shape (returns its wall time in ms): a DataLoader batch
    from 2 workers (sampled with replacement, never ending, as minGPT's trainer does), a 3-layer
    transformer, AdamW through `optimizer.step()`."""
    import torch
    from torch import nn
    from torch.utils.data import DataLoader, RandomSampler, TensorDataset

    torch.manual_seed(0)
    if device == "cpu":
        torch.set_num_threads(1)
    width, vocab, seq = 48, 10, 6
    emb = nn.Embedding(vocab, width).to(device)
    body = nn.TransformerEncoder(nn.TransformerEncoderLayer(width, 3, 4 * width,
                                                            batch_first=True), 3).to(device)
    head = nn.Linear(width, vocab).to(device)
    params = [*emb.parameters(), *body.parameters(), *head.parameters()]
    opt = torch.optim.AdamW(params, lr=5e-4)
    data = TensorDataset(torch.randint(0, vocab, (4096, seq)), torch.randint(0, vocab, (4096, seq)))
    sampler = RandomSampler(data, replacement=True, num_samples=10**9)
    batches = iter(DataLoader(data, batch_size=64, sampler=sampler, num_workers=2))

    def step() -> float:
        t0 = time.perf_counter()
        x, y = next(batches)
        x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
        loss = nn.functional.cross_entropy(head(body(emb(x))).view(-1, vocab), y.view(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        return (time.perf_counter() - t0) * 1e3

    return step


SHAPES = {"lm": _loop, "gpt": _gpt_loop}


def _unstreamed_clock(expected: int) -> Any:
    """The baseline clock as it was: each mark's record looks the current stream up again."""
    from jupyter_gpuprof.capture.driver import CudaEventClock, default_clock

    clock = default_clock(expected)
    if isinstance(clock, CudaEventClock):
        def mark() -> None:
            ev = clock._pool.pop() if clock._pool else clock._new()
            ev.record()
            clock._used.append(ev)

        clock.mark = mark  # type: ignore[method-assign]
    return clock


class Pieces:
    """The capture's baseline pieces, each made once and switched on and off between blocks."""

    def __init__(self, marks: int, clock_events: int | None = None) -> None:
        """`marks`: step boundaries the baseline phase lasts; `clock_events`: CUDA events its
        clock makes up front (default: one a mark)."""
        from jupyter_gpuprof.capture.capture_cost import COST
        from jupyter_gpuprof.capture.driver import Schedule, StepDriver, default_clock

        def driver(clock: Callable[[int], Any]) -> Any:
            made = clock if clock_events is None else (lambda n: clock(min(n, clock_events)))
            d = StepDriver(Schedule(warmup=0, steps=marks, wait=0, prof_warmup=0, active=1),
                           profiler_factory=lambda: None, clock_factory=made)
            d.start()  # no warm-up: the baseline phase and its clock begin now
            return d

        self.cost = COST
        COST.reset()
        COST.on_event("baseline")
        self.drivers = {"hooks": driver(default_clock),
                        "hooks-unstreamed": driver(_unstreamed_clock)}

    def _hooks(self, driver: Any) -> Callable[[], None]:
        """What a session installs for a loop (capture/session.py `_install`): the phase
        ranges' optimizer hooks (silent in the baseline), the backward wrapper and optimizer
        pre-hook, and the post-hook that ends a step at the first optimizer's step; a loop
        without one ends its steps at `backward()`, on the baseline clock either way."""
        from torch.optim.optimizer import register_optimizer_step_post_hook

        from jupyter_gpuprof.capture.phases import PhaseRanges
        from jupyter_gpuprof.capture.training import TrainingCounters

        ranges = PhaseRanges()
        ranges.install()
        counters = TrainingCounters(on_backward_step=driver.boundary)
        counters.steps_by = getattr(self, "_steps_by", None)
        counters.install()
        first: list[int] = []

        def stepped(optimizer: Any, args: Any, kwargs: Any) -> None:
            first[:] = first or [id(optimizer)]
            counted = id(optimizer) == first[0]
            counters.on_optimizer_step(id(optimizer), counted)
            if counted:
                driver.boundary()

        handle = register_optimizer_step_post_hook(self.cost.timed(stepped))

        def off() -> None:
            self._steps_by = counters.steps_by  # how the loop's steps end, learnt once
            handle.remove()
            counters.remove()
            ranges.remove()

        return off

    def on(self, piece: str) -> Callable[[], None]:
        """Switch `piece` on; returns what switches it off."""
        if piece in self.drivers:
            return self._hooks(self.drivers[piece])
        if piece.startswith("sampler"):
            from jupyter_gpuprof.capture.conditions import (
                BASELINE_INTERVAL_S,
                SAMPLE_INTERVAL_S,
                ConditionSampler,
            )

            every = SAMPLE_INTERVAL_S if piece == "sampler-0.1s" else BASELINE_INTERVAL_S
            sampler = ConditionSampler(interval_s=every).start()
            return sampler.stop  # (its summary is not needed)
        if piece == "stalls":
            from jupyter_gpuprof.capture.stalls import StallWatch

            watch = StallWatch(lambda: 0)
            watch.install()
            return watch.remove
        if piece == "all":
            offs = [self.on(p) for p in ("hooks", "sampler", "stalls")]

            def all_off() -> None:
                for off in reversed(offs):
                    off()

            return all_off
        return lambda: None


def child(shape: str, rounds: int, block: int) -> dict[str, Any]:
    """One process: warm up, then `rounds` rounds of one block per piece and a plain one."""
    import torch

    step = SHAPES[shape]("cuda" if torch.cuda.is_available() else "cpu")
    for _ in range(200):
        step()
    pieces = Pieces(marks=rounds * block * 3 + 10)
    order = ["none", *PIECES]
    ratios: dict[str, list[float]] = {p: [] for p in PIECES}
    plain_ms: list[float] = []
    for r in range(rounds):
        k = r % len(order)
        got: dict[str, float] = {}
        for piece in order[k:] + order[:k]:  # each piece meets each position in turn
            off = pieces.on(piece)
            try:
                got[piece] = statistics.median(step() for _ in range(block))
            finally:
                off()
        plain_ms.append(got["none"])
        for p in PIECES:
            ratios[p].append(got[p] / got["none"])
    account = pieces.cost.to_meta(None)
    return {"device": "cuda" if torch.cuda.is_available() else "cpu", "shape": shape,
            "plain_ms": statistics.median(plain_ms), "ratios": ratios,
            "hook_account": dict(account) if account else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="lm",
                    help="lm: the word LM's step, ended at backward(); gpt: minGPT's adder's, "
                         "a DataLoader and optimizer.step()")
    ap.add_argument("--rounds", type=int, default=40, help="rounds in each process")
    ap.add_argument("--block", type=int, default=20, help="steps in each block")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.shape, args.rounds, args.block)))
        return 0
    rows = []
    for i in range(args.processes):
        out = subprocess.run([sys.executable, __file__, "--child", "--shape", args.shape,
                              "--rounds", str(args.rounds), "--block", str(args.block)],
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        row = rows[-1]
        each = ", ".join(f"{p} x{math.exp(statistics.fmean(map(math.log, row['ratios'][p]))):.4f}"
                         for p in PIECES)
        print(f"process {i} ({args.shape}, {row['device']}, plain step {row['plain_ms']:.3f} "
              f"ms): {each}; hook account {row['hook_account']}", flush=True)
        summary = {p: pooled([x for row in rows for x in row["ratios"][p]]) for p in PIECES}
        if args.json:  # after every process: a run cut short keeps the processes it finished
            args.json.write_text(json.dumps({"shape": args.shape, "rows": rows,
                                             "pieces": summary}, indent=1))
    for p, s in summary.items():
        lo, hi = s.get("ci95", [math.nan, math.nan])
        print(f"{p:17} x{s.get('ratio', math.nan):.4f} (95 % CI {lo:.4f}-{hi:.4f}, "
              f"{s['pairs']} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
