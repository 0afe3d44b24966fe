"""What the capture's own code costs the baseline it times, measured while that baseline runs.

Every hook the capture installs (optimizer step hooks, the backward and DataLoader wrappers,
the step boundary with its clock mark) charges its own time here, and the GPU-conditions
sampler its thread's CPU time; the report states the total per baseline step beside the step
time, so the observer effect is a measurement, not a claim.
"""

from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..store.meta_blocks import CaptureCostMeta

F = TypeVar("F", bound=Callable[..., Any])
#: calls whose single times are kept (a long baseline of a many-hook loop stays bounded)
MAX_CALLS = 200_000


class HookCost:
    """Nanoseconds the capture's hooks spent so far in this process, and how many calls."""

    def __init__(self) -> None:
        self.ns = 0
        self.calls = 0
        self._each: list[int] = []  # each call's ns, the first MAX_CALLS (their spread)
        self._at_baseline: tuple[int, int] | None = None
        self.baseline: tuple[int, int] | None = None
        self._event_ns = 0  # when the last phase began: a call spanning it is charged after it

    def reset(self) -> None:
        """A new capture starts counting from zero."""
        self.__init__()  # type: ignore[misc]

    def add(self, ns: int) -> None:
        """Charge `ns` nanoseconds of one hook call."""
        self.ns += ns
        self.calls += 1
        if self.calls <= MAX_CALLS:
            self._each.append(ns)

    def timed(self, fn: F) -> F:
        """`fn` (a hook wholly ours) charging its own time on every call."""
        now, add, cost = time.perf_counter_ns, self.add, self

        @functools.wraps(fn)
        def charged(*args: Any, **kwargs: Any) -> Any:
            t0 = now()
            try:
                return fn(*args, **kwargs)
            finally:
                # a step boundary that started a phase charges that phase only what came after
                add(now() - max(t0, cost._event_ns))

        return charged  # type: ignore[return-value]

    def on_event(self, event: str) -> None:
        """'baseline' starts the count; the next phase ('capture', 'done') ends it."""
        self._event_ns = time.perf_counter_ns()
        if event == "baseline":
            self._at_baseline = (self.ns, self.calls)
        elif self._at_baseline is not None and self.baseline is None:
            self.baseline = (self.ns - self._at_baseline[0], self.calls - self._at_baseline[1])

    def to_meta(self, sampler_cpu_ms: float | None) -> CaptureCostMeta | None:
        """The baseline's figures (None when no baseline phase ended: nothing to state)."""
        done = self.baseline
        if done is None and self._at_baseline is not None:  # the run ended inside the baseline
            done = (self.ns - self._at_baseline[0], self.calls - self._at_baseline[1])
        if done is None:
            return None
        out: CaptureCostMeta = {"hooks_ms": round(done[0] / 1e6, 4), "hook_calls": done[1],
                                "sampler_cpu_ms": round(sampler_cpu_ms or 0.0, 4)}
        first = self._at_baseline[1] if self._at_baseline is not None else 0
        if each := self._each[first:first + done[1]]:
            # a total made of one long call (a collector pass that our allocation started)
            # reads differently from a cost every step pays: the median call tells them apart
            out["median_call_us"] = round(statistics.median(each) / 1e3, 2)
            out["max_call_us"] = round(max(each) / 1e3, 1)
        return out


#: the process's one account (one capture runs per process: capture/session.py)
COST = HookCost()
