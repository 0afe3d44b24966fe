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
`backward()` wrapper and optimizer hooks (capture/training.py, capture/optimizer_hooks.py)
ending each step on a real baseline clock (capture/driver.py), the general way a session takes
outside its baseline; `hooks-separate` the same with
each optimizer callback behind its own torch hook and cost wrapper, as before session 46 (the
capture's two shared hooks stay in, emptied: two calls that return at once); `sampler` the
GPU-conditions thread (capture/conditions.py); `stalls` the DataLoader,
`torch.save`, `Module.train` wrappers and the collector's callback (capture/stalls.py); `all`
every piece at once; `session` the capture itself, a real ProfileSession's baseline (what the
in-process observer check switches). Prints each piece's geometric mean ratio with its 95 % t
interval over all rounds of all processes, the time its hooks charged to the capture's own
account per step (capture_cost.py: measured inside the steps, so the caches are as cold as the
step leaves them; `--evict MIB` empties them before each step on a host whose own step is too
small to), and that account's total.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent / "corpus"))
from capture_step_shapes import SHAPES, evicting  # noqa: E402 - the steps the pieces are timed in
from observer_concurrent import pooled  # noqa: E402 - geometric mean and its t interval

PIECES = ("hooks", "hooks-separate", "sampler", "stalls", "all", "session")
#: how long the `pause` piece holds the main thread when it switches on (s): about what a
#: capture's set-up takes, long enough for a DataLoader worker to fill its prefetch
PAUSE_S = 0.06
#: more pieces for `--pieces`, to say where a cost lives: the hooks on the host clock, an
#: optimizer hook that only marks the baseline clock, one that does nothing, the training
#: counters alone (the backward() wrapper and a callback before each optimizer step); the same
#: mark and the same empty callback before the optimizer step (`pre-mark`, `pre-bare`), an empty
#: torch post-hook of its own with no chain (`raw-post`), a mark at the end of every
#: `backward()` from a wrapper (`bwd-mark`); a switch's pause and nothing else (`pause`: the
#: observer check's control, tests/analysis/test_observer_inprocess.py)
MORE = ("pause", "hooks-hostclock", "mark-only", "bare-hook", "counters", "sampler-0.1s",
        "pre-mark", "pre-bare", "raw-post", "bwd-mark")




def _separate(cost: Any, ranges: Any) -> Callable[[], None]:
    """The optimizer hooks as they were before session 46: the phase ranges' two (silent in the
    baseline) and each callback of the capture's two shared hooks registered as a torch hook of
    its own, behind its own cost wrapper."""
    from torch.optim import optimizer as optim

    from jupyter_gpuprof.capture.optimizer_hooks import AFTER_STEP, BEFORE_STEP

    saved = {BEFORE_STEP: BEFORE_STEP.callbacks, AFTER_STEP: AFTER_STEP.callbacks}
    pre = (ranges._optimizer_pre, *saved[BEFORE_STEP])
    post = (ranges._optimizer_post, *saved[AFTER_STEP])
    handles = [optim.register_optimizer_step_pre_hook(cost.timed(f)) for f in pre]
    handles += [optim.register_optimizer_step_post_hook(cost.timed(f)) for f in post]
    for chain in saved:
        chain.callbacks = ()

    def off() -> None:
        for handle in handles:
            handle.remove()
        for chain, callbacks in saved.items():
            chain.callbacks = callbacks

    return off


class Pieces:
    """The capture's baseline pieces, each made once and switched on and off between blocks."""

    def __init__(self, marks: int, clock_events: int | None = None) -> None:
        """`marks`: step boundaries the baseline phase lasts; `clock_events`: CUDA events its
        clock makes up front (default: one a mark)."""
        from jupyter_gpuprof.capture.capture_cost import COST
        from jupyter_gpuprof.capture.driver import (
            PerfCounterClock,
            Schedule,
            StepDriver,
            default_clock,
        )

        def driver(clock: Callable[[int], Any]) -> Any:
            made = clock if clock_events is None else (lambda n: clock(min(n, clock_events)))
            d = StepDriver(Schedule(warmup=0, steps=marks, wait=0, prof_warmup=0, active=1),
                           profiler_factory=lambda: None, clock_factory=made)
            d.start()  # no warm-up: the baseline phase and its clock begin now
            return d

        self.cost = COST
        COST.reset()
        COST.on_event("baseline")
        self.drivers = {"hooks": driver(default_clock), "hooks-separate": driver(default_clock),
                        "hooks-hostclock": driver(PerfCounterClock)}
        self._marks = default_clock(min(marks, clock_events or marks))  # for "mark-only"
        self._session_steps = min(marks, clock_events or marks)
        self._root: str | None = None  # a scratch runs folder for "session"
        #: whether the piece switched on last is past its one-off set-up, in the state a
        #: capture times (a session: its baseline's clock running)
        self.timing: Callable[[], bool] = lambda: True

    def _hooks(self, driver: Any) -> Callable[[], None]:
        """What a session installs for a loop (capture/session.py `_install`), its general
        way (what it runs outside the baseline, and ran through it before session 47, when the
        counters pause and the step hook takes a short way there: `session` is that): the
        phase ranges' optimizer hooks (silent in the baseline), the backward wrapper and
        optimizer pre-hook, and the post-hook that ends a step at the first optimizer's step; a
        loop without one ends its steps at `backward()`, on the baseline clock either way."""
        from jupyter_gpuprof.capture.optimizer_hooks import AFTER_STEP
        from jupyter_gpuprof.capture.phases import PhaseRanges
        from jupyter_gpuprof.capture.training import TrainingCounters

        ranges = PhaseRanges()
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

        remove = AFTER_STEP.add(stepped)
        separate = (_separate(self.cost, ranges) if driver is self.drivers["hooks-separate"]
                    else None)

        def off() -> None:
            self._steps_by = counters.steps_by  # how the loop's steps end, learnt once
            if separate is not None:
                separate()
            remove()
            counters.remove()
            ranges.deactivate()

        return off

    def _session(self) -> Callable[[], None]:
        """The capture itself, as `jupyter gpuprof run` makes it (capture/session.py): a
        ProfileSession begun in a scratch runs folder with no warm-up and a baseline longer
        than any block, so the next step starts its baseline and each step after it runs as a
        baseline step of a capture does (every hook, wrapper, the sampler); switched off, it
        is discarded and its folder deleted."""
        import atexit
        import contextlib
        import shutil
        import tempfile

        from jupyter_gpuprof.capture.driver import Phase
        from jupyter_gpuprof.capture.session import ProfileSession
        from jupyter_gpuprof.capture.settings import CaptureSettings
        from jupyter_gpuprof.store import RunStore

        if self._root is None:
            self._root = tempfile.mkdtemp(prefix="gpuprof-observer-")
            atexit.register(shutil.rmtree, self._root, ignore_errors=True)  # the scratch folder
        settings = CaptureSettings(mode="script", warmup=0, steps=self._session_steps, wait=0,
                                   prof_warmup=0, active=1)
        session = ProfileSession(settings, name="observer", store=RunStore(self._root)).begin()
        self.timing = lambda: session.driver.phase is Phase.BASELINE

        def off() -> None:
            session.discard()
            with contextlib.suppress(Exception):
                session.store.delete(session.run.id)

        return off

    def _backward_mark(self) -> Callable[[], None]:
        """A baseline clock mark at the end of every `torch.autograd.backward`, from a wrapper
        of the shape the training counters put there."""
        import torch

        original, mark = torch.autograd.backward, self._marks.mark

        def backward(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            mark()
            return out

        torch.autograd.backward = backward

        def off() -> None:
            torch.autograd.backward = original

        return off

    def on(self, piece: str) -> Callable[[], None]:
        """Switch `piece` on; returns what switches it off."""
        self.timing = lambda: True
        if piece in self.drivers:
            return self._hooks(self.drivers[piece])
        if piece == "session":
            return self._session()
        if piece.startswith("sampler"):
            from jupyter_gpuprof.capture.conditions import (
                BASELINE_INTERVAL_S,
                SAMPLE_INTERVAL_S,
                ConditionSampler,
            )

            every = SAMPLE_INTERVAL_S if piece == "sampler-0.1s" else BASELINE_INTERVAL_S
            sampler = ConditionSampler(interval_s=every).start()
            return sampler.stop  # (its summary is not needed)
        if piece == "pause":  # the observer check's control: a switch's pause and nothing else
            import time

            time.sleep(PAUSE_S)
            return lambda: None
        if piece == "stalls":
            from jupyter_gpuprof.capture.stalls import StallWatch

            watch = StallWatch(lambda: 0)
            watch.install()
            watch.time_fetches(True)  # as in a baseline
            return watch.remove
        if piece in ("mark-only", "bare-hook"):
            from jupyter_gpuprof.capture.optimizer_hooks import AFTER_STEP

            mark = self._marks.mark
            return AFTER_STEP.add((lambda o, a, k: mark()) if piece == "mark-only"
                                  else (lambda o, a, k: None))
        if piece in ("pre-mark", "pre-bare"):
            from jupyter_gpuprof.capture.optimizer_hooks import BEFORE_STEP

            mark = self._marks.mark
            return BEFORE_STEP.add((lambda o, a, k: mark()) if piece == "pre-mark"
                                   else (lambda o, a, k: None))
        if piece == "raw-post":
            from torch.optim import optimizer

            return optimizer.register_optimizer_step_post_hook(lambda o, a, k: None).remove
        if piece == "bwd-mark":
            return self._backward_mark()
        if piece == "counters":
            from jupyter_gpuprof.capture.training import TrainingCounters

            counters = TrainingCounters()
            counters.install()
            return counters.remove
        if piece == "all":
            offs = [self.on(p) for p in ("hooks", "sampler", "stalls")]

            def all_off() -> None:
                for off in reversed(offs):
                    off()

            return all_off
        return lambda: None


def child(shape: str, rounds: int, block: int, chosen: tuple[str, ...] = PIECES,
          evict_mib: int = 0) -> dict[str, Any]:
    """One process: warm up, then `rounds` rounds of one block per piece and a plain one."""
    import torch

    step = SHAPES[shape]("cuda" if torch.cuda.is_available() else "cpu")
    if evict_mib:
        step = evicting(step, evict_mib)
    for _ in range(200):
        step()
    pieces = Pieces(marks=rounds * block * 3 + 10)
    order = ["none", *chosen]
    ratios: dict[str, list[float]] = {p: [] for p in chosen}
    own_us: dict[str, list[float]] = {p: [] for p in chosen}
    plain_ms: list[float] = []
    cost = pieces.cost
    for r in range(rounds):
        k = r % len(order)
        got: dict[str, float] = {}
        for piece in order[k:] + order[:k]:  # each piece meets each position in turn
            off = pieces.on(piece)
            try:
                ns = cost.ns
                got[piece] = statistics.median(step() for _ in range(block))
                if piece != "none":  # what its hooks charged, timed inside the steps
                    own_us[piece].append((cost.ns - ns) / 1e3 / block)
            finally:
                off()
        plain_ms.append(got["none"])
        for p in chosen:
            ratios[p].append(got[p] / got["none"])
    account = pieces.cost.to_meta(None)
    return {"device": "cuda" if torch.cuda.is_available() else "cpu", "shape": shape,
            "evict_mib": evict_mib,
            "plain_ms": statistics.median(plain_ms), "ratios": ratios,
            "own_us_per_step": {p: statistics.median(v) for p, v in own_us.items()},
            "hook_account": dict(account) if account else None}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, default=3)
    ap.add_argument("--shape", choices=sorted(SHAPES), default="lm",
                    help="lm: the word LM's step, ended at backward(); gpt: minGPT's adder's, "
                         "a DataLoader and optimizer.step(); ddp: the DDP tutorial's 1 ms step")
    ap.add_argument("--rounds", type=int, default=40, help="rounds in each process")
    ap.add_argument("--block", type=int, default=20, help="steps in each block")
    ap.add_argument("--pieces", default=",".join(PIECES),
                    help=f"comma-separated, of {', '.join(PIECES + MORE)}")
    ap.add_argument("--evict", type=int, default=0, metavar="MIB",
                    help="empty the caches before each step by touching this many MiB "
                         "(more than the last-level cache): our calls run cold, as in a big step")
    ap.add_argument("--json", type=Path, help="write the results here")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    chosen = tuple(args.pieces.split(","))
    if unknown := set(chosen) - set(PIECES + MORE):
        ap.error(f"no such piece: {', '.join(sorted(unknown))}")
    if args.child:
        print(json.dumps(child(args.shape, args.rounds, args.block, chosen, args.evict)))
        return 0
    rows = []
    for i in range(args.processes):
        out = subprocess.run([sys.executable, __file__, "--child", "--shape", args.shape,
                              "--rounds", str(args.rounds), "--block", str(args.block),
                              "--pieces", args.pieces, "--evict", str(args.evict)],
                             capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        row = rows[-1]
        own = row["own_us_per_step"]
        each = ", ".join(f"{p} x{math.exp(statistics.fmean(map(math.log, row['ratios'][p]))):.4f}"
                         f" ({own[p]:.2f} µs own)" for p in chosen)
        print(f"process {i} ({args.shape}, {row['device']}, plain step {row['plain_ms']:.3f} "
              f"ms): {each}; hook account {row['hook_account']}", flush=True)
        summary = {p: pooled([x for row in rows for x in row["ratios"][p]]) for p in chosen}
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
