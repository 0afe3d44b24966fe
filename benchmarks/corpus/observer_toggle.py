"""Inside a corpus script's own process: the capture's baseline pieces switched on and off.

Loaded at start-up by `inprocess/sitecustomize.py` (observer_inprocess.py puts it on the
script's PYTHONPATH). Once the script imports torch, a trigger goes on `torch.autograd.backward`
(an extra call per backward, the same in both kinds of block); after $OBSERVER_SETTLE_S seconds
it switches the capture's baseline on and off again every $OBSERVER_BLOCK_S seconds, at the end
of a `backward()` in the main thread: never while an optimizer iterates its hooks. `on` begins a
real ProfileSession as `jupyter gpuprof run` does, with no warm-up and a baseline longer than a
block (bench_capture_pieces.Pieces "session": its next step starts the baseline, each later one
runs through every hook, wrapper and the GPU-conditions sampler of a baseline step); `off`
discards it. $OBSERVER_PIECE names another of that benchmark's pieces instead ("all": the same
pieces rebuilt outside a session, as before session 47). With $OBSERVER_ALIGN=epoch a block
ends only at a point of the same place in a DataLoader epoch (the first `backward()` after the
epoch's $OBSERVER_ALIGN_AFTER-th fetch, default 4), at most once an epoch: a script whose
epochs are short and start with a stall (DCGAN's workers start again every 16 iterations) gets
blocks of whole epochs, each holding the same number of stalls. Each switch
prints `gpuprof-observer: on|off <perf_counter>` on stderr, so the parent can put each of the
script's own log values in the block it was measured in. A switch is a pause of the main thread
(a session begun or discarded), during which a DataLoader's workers go on making batches: the
next fetches take them at once, faster than the loop runs, and a longer pause (`on`) gives its
block more of them. So after each switch, once the loop has fetched as many batches as its
loader holds ready and one more (capture/stalls.settle_steps: begun when the first of them
was taken, it arrives early), the toggler prints `gpuprof-observer: settled <perf_counter> <n>`,
and the block is read from there (as the capture itself starts its baseline's clock:
capture/driver.Schedule.settle). An `on` block is read only once its pieces are past their
one-off set-up too (`Pieces.timing`: a session's baseline clock running, as a capture times
it: the set-up's pause, the clock's events made, the allocator history stopped are no step of
its baseline).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

MARK = "gpuprof-observer:"
#: where a block may end: anywhere (""), or at the same place of each DataLoader epoch
ALIGNMENTS = ("", "epoch")
#: events the baseline clock makes up front (a mark past them makes one, as a long baseline
#: would): more than a block holds steps (0.5 s blocks of steps over 0.125 ms), few enough that
#: making them at an `on` block's first step costs a few ms, not the ~70 ms of 20,000 (session
#: 48: the MNIST scripts' `on` blocks held 2-4 of their log values against the `off` blocks' 5-7)
CLOCK_EVENTS = 4_000


class Toggler:
    """Switches the pieces at the first `backward()` that ends after each block's time is up."""

    def __init__(self, settle_s: float, block_s: float, pieces: Callable[[], Any] | None = None,
                 out: Any = None, align: str = "", align_after: int = 4) -> None:
        self.settle_s, self.block_s = settle_s, block_s
        if align not in ALIGNMENTS:
            raise ValueError(f"OBSERVER_ALIGN={align!r}: only 'epoch' (or nothing) aligns blocks")
        self.align, self.align_after = align, align_after
        self._epoch, self._fetched, self._switched_in = 0, 0, -1
        self.stock = 0  # the most batches a loader iterated so far holds ready
        self._settle_left = 0  # fetches still to come before the running block is read
        self._pending = False  # the running block's `settled` mark is still to come
        self._make = pieces or _all_pieces
        self._pieces: Any = None
        self._off: Callable[[], None] | None = None
        self._due = 0.0
        self._out = out or sys.stderr
        self.piece = os.environ.get("OBSERVER_PIECE", "session")
        self.switches = 0

    def install(self, torch: Any) -> None:
        """Put the trigger on `torch.autograd.backward`; the first block starts after settling."""
        original = torch.autograd.backward
        self._due = time.perf_counter() + self.settle_s

        def backward(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            if self._pending:
                self._settled()
            if time.perf_counter() >= self._due and self._at_a_block_edge():
                self.switch()
            return out

        torch.autograd.backward = backward
        self._count_fetches(torch)

    def _count_fetches(self, torch: Any) -> None:
        """Count each epoch's fetches and learn the loader's stock of ready batches: a wrapper
        on DataLoader.__iter__ and on its iterator's __next__, put on before the first block
        and kept in both kinds of block; the fetch that uses up a switch's stock prints
        `settled`."""
        from jupyter_gpuprof.capture.stalls import epoch_batches, loader_stock

        loader = torch.utils.data.DataLoader
        it = torch.utils.data.dataloader._BaseDataLoaderIter
        start, fetch = loader.__iter__, it.__next__

        def epoch(this: Any) -> Any:
            self._epoch, self._fetched = self._epoch + 1, 0
            self.stock = max(self.stock, loader_stock(getattr(this, "num_workers", 0),
                                                      getattr(this, "prefetch_factor", None),
                                                      epoch_batches(this)))
            return start(this)

        def next_batch(this: Any) -> Any:
            self._fetched += 1
            out = fetch(this)
            if self._settle_left:
                self._settle_left -= 1
                if not self._settle_left:
                    self._settled()
            return out

        loader.__iter__, it.__next__ = epoch, next_batch

    def _at_a_block_edge(self) -> bool:
        """Anywhere for time blocks; with epochs, the first chance past the epoch's
        `align_after`-th fetch, once an epoch."""
        if not self.align:
            return True
        if self._fetched < self.align_after or self._switched_in == self._epoch:
            return False
        self._switched_in = self._epoch
        return True

    def _settled(self) -> None:
        """Print `settled` once the running block may be read: the loader's stock taken, and
        an `on` block's pieces past their one-off set-up (a session's baseline clock
        running, as a capture times it)."""
        timing = getattr(self._pieces, "timing", None)
        if self._pending and not self._settle_left and (self._off is None or timing is None
                                                         or timing()):
            self._pending = False
            print(f"{MARK} settled {time.perf_counter():.6f} {self.stock}", file=self._out,
                  flush=True)

    def switch(self) -> None:
        """End the running block and start the other kind."""
        if self._pieces is None:
            self._pieces = self._make()  # its clock's events made before the first block
        if self._off is not None:
            self._off()
            self._off, state = None, "off"
        else:
            self._off, state = self._pieces.on(self.piece), "on"
        self.switches += 1
        now = time.perf_counter()
        print(f"{MARK} {state} {now:.6f}", file=self._out, flush=True)
        from jupyter_gpuprof.capture.stalls import settle_steps

        self._settle_left = settle_steps(self.stock)
        self._pending = True
        self._due = now + self.block_s


def _all_pieces() -> Any:
    """The benchmark's pieces with a baseline clock that never runs out of steps."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from bench_capture_pieces import Pieces

    return Pieces(marks=10**9, clock_events=CLOCK_EVENTS)


def start() -> None:
    """Wait (in a thread) for the script to import torch, then install the trigger."""
    settle = float(os.environ.get("OBSERVER_SETTLE_S", "5"))
    block = float(os.environ.get("OBSERVER_BLOCK_S", "0.5"))
    align = os.environ.get("OBSERVER_ALIGN", "")
    after = int(os.environ.get("OBSERVER_ALIGN_AFTER", "4"))

    def wait() -> None:
        while True:
            torch = sys.modules.get("torch")
            autograd = getattr(torch, "autograd", None) if torch is not None else None
            if autograd is not None and hasattr(autograd, "backward"):
                Toggler(settle, block, align=align, align_after=after).install(torch)
                return
            time.sleep(0.02)

    threading.Thread(target=wait, daemon=True, name="observer-toggle").start()
