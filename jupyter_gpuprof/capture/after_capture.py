"""The steps after the capture, timed to the script's end: what the whole run costs a step.

The baseline is a few dozen steps; an evaluation every 500 steps, a checkpoint every 1,000 or
a DataLoader restarting its workers every epoch fall outside it, and the user pays them all the
same. The capture's hooks stay in place after its trace is written, so each later step
boundary is stamped on the host clock (one `perf_counter_ns` and one append: no GPU call), and
meta.json's `baseline.after` says, at the script's end, how long each of those steps took.
The first step after the trace is left out: it pays the profiler's own teardown.
"""

from __future__ import annotations

import time
from array import array

from ..store.meta_blocks import AfterCaptureMeta

#: step times kept one by one (about 8 bytes each in meta.json); later steps still count in
#: the run's step count and wall time, not in the spikes
MAX_STEPS = 50_000


class AfterCapture:
    """Stamps the step boundaries that follow the capture, once it is started."""

    def __init__(self) -> None:
        self.n = 0  # step boundaries since start(): the index of the step running now
        self.first_step: int | None = None  # that step's index on the baseline's count
        self._stamps = array("q")
        self._last = 0
        self._wall_ns = 0  # every timed step's time, those past MAX_STEPS included
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
            self._wall_ns += now - self._last
            self._timed += 1
            if self._timed <= MAX_STEPS:
                self._stamps.append(now - self._last)
        self._last = now

    def to_meta(self) -> AfterCaptureMeta | None:
        """meta.json's `baseline.after` (None when no step after the capture was timed)."""
        if self.first_step is None or not self._timed:
            return None
        return {"first_step": self.first_step + 1, "steps": self._timed,
                "wall_ms": round(self._wall_ns / 1e6, 3),
                "step_ms": [round(ns / 1e6, 4) for ns in self._stamps]}
