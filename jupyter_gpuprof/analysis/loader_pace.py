"""Whether the DataLoader sets the step's pace: the unprofiled baseline's waits in `__next__`.

Under the profiler the training process runs slower, so its DataLoader workers keep up and
the trace shows little waiting for data; without the profiler the same loop can spend most
of each step waiting for the next batch. The capture times `__next__` in the baseline
(capture/stalls.py), and this is what those waits say: with worker processes, a training
process that waits is paced by them, so a fix that makes the step's own work faster (launch,
host, GPU) saves nothing until the loader is faster; without workers the loading is the
process's own work, and every fix adds up.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: what each batch from a worker still costs the training process once the loader keeps up (ms):
#: the queue's hand-over (minGPT's adder, 4 workers ahead of the loop: 0.13-0.15 ms a step on
#: the H200; the MNIST corpus scripts' loader tries left a median 0.37 ms over the loading-free
#: step, each try another process)
HANDOVER_MS = 0.2
#: a wait no longer than the hand-over is not the loader's pace
PACE_MIN_MS = HANDOVER_MS
#: the loader paces the loop when the training process waits this share of its step
PACE_MIN_SHARE = 0.10


@dataclass(frozen=True)
class LoaderPace:
    """The baseline's median wait per step in DataLoader `__next__`, and its loader's workers."""

    wait_ms: float
    workers: int
    steps: int
    #: untimed steps before the baseline's clock, taking the batches its workers made ready
    #: while the capture set up (capture/driver.Schedule.settle)
    settled: int = 0

    def paces(self, step_ms: float) -> bool:
        """True when worker processes set the step's pace (the training process waits)."""
        return self.workers > 0 and self.wait_ms >= max(PACE_MIN_MS, PACE_MIN_SHARE * step_ms)

    def keeps_up(self) -> bool:
        """True when the step waits no longer than a hand-over: more workers would save nothing,
        now or once the GPU's work shrinks."""
        return self.wait_ms <= HANDOVER_MS

    def saving_ms(self, step_ms: float, gpu_busy_ms: float) -> float:
        """What a loader that keeps up saves a step: the wait less the hand-over every batch
        from a worker still costs, down to the GPU's own work. The baseline's own clock, so no
        replay of the profiled loading (slowed by the profiler unlike the rest) may promise more."""
        return max(0.0, min(self.wait_ms - HANDOVER_MS, step_ms - gpu_busy_ms))


def loader_pace(wait_ms: Sequence[float] | None, workers: int | None,
                settled: int | None = None) -> LoaderPace | None:
    """The pace from the baseline's per-step waits (None when the capture timed none)."""
    waits = [float(w) for w in wait_ms or [] if w is not None and w >= 0]
    if not waits:
        return None
    return LoaderPace(statistics.median(waits), int(workers or 0), len(waits), int(settled or 0))
