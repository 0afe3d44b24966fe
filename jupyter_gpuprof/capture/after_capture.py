"""The steps after the capture, timed to the script's end: what the whole run costs a step.

The baseline is a few dozen steps; an evaluation every 500 steps, a checkpoint every 1,000 or
a DataLoader restarting its workers every epoch fall outside it, and the user pays them all the
same. The capture's hooks stay in place after its trace is written, so each later step
boundary is stamped on the host clock (one `perf_counter_ns` and a few additions: no GPU call),
and meta.json's `baseline.after` says, at the script's end, how long those steps took.
The first step after the trace is left out: it pays the profiler's own teardown.

Whatever the run's length, what is kept stays bounded: each step's time while there are at most
`MAX_BLOCKS` of them, then the mean of blocks of 2, 4, 8… steps (adjacent blocks merged two by
two whenever they fill up), so a week-long run's meta.json holds as many numbers as a short one's
and its wall time stays exact.
"""

from __future__ import annotations

import time
from array import array

from ..store.meta_blocks import AfterCaptureMeta

#: the most step times (or block means) kept; a run longer than this keeps blocks of 2^k steps
MAX_BLOCKS = 4096


class AfterCapture:
    """Stamps the step boundaries that follow the capture, once it is started."""

    def __init__(self) -> None:
        self.n = 0  # step boundaries since start(): the index of the step running now
        self.first_step: int | None = None  # that step's index on the baseline's count
        self._sums = array("d")  # each full block's time (ns)
        self._block = 1  # steps per block
        self._open_ns = 0  # the block being filled: its time so far and its steps
        self._open_n = 0
        self._last = 0
        self._wall_ns = 0  # every timed step's time
        self._timed = 0

    @property
    def started(self) -> bool:
        """Whether the capture is done and later steps are being stamped."""
        return self.first_step is not None

    def start(self, first_step: int) -> None:
        """The capture is done; `first_step` is the next step's index counted from the
        baseline's first timed step (how the stall events are stamped)."""
        self.first_step = first_step

    def mark(self) -> None:
        """A step after the capture ended (the first one only starts the clock)."""
        if self.first_step is None:
            return
        now = time.perf_counter_ns()
        self.n += 1
        if self.n > 1:
            dt = now - self._last
            self._wall_ns += dt
            self._timed += 1
            self._open_ns += dt
            self._open_n += 1
            if self._open_n == self._block:
                self._sums.append(self._open_ns)
                self._open_ns = self._open_n = 0
                if len(self._sums) >= MAX_BLOCKS:
                    self._halve()
        self._last = now

    def _halve(self) -> None:
        """Merge adjacent blocks two by two: blocks twice as long, half as many."""
        s = self._sums
        self._sums = array("d", (s[i] + s[i + 1] for i in range(0, len(s) - 1, 2)))
        self._block *= 2

    def to_meta(self) -> AfterCaptureMeta | None:
        """meta.json's `baseline.after` (None when no step after the capture was timed)."""
        if self.first_step is None or not self._timed:
            return None
        b = self._block
        return {"first_step": self.first_step + 1, "steps": self._timed,
                "wall_ms": round(self._wall_ns / 1e6, 3), "block_steps": b,
                "step_ms": [round(ns / b / 1e6, 4) for ns in self._sums]}
