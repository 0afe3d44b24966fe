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
from array import array
from collections.abc import Callable
from typing import Any, TypeVar

from ..store.meta_blocks import CaptureCostMeta

F = TypeVar("F", bound=Callable[..., Any])
#: what `add` becomes once the baseline's account is closed: a builtin that keeps nothing (the
#: hooks stay in for the rest of a long script, and no later call is read)
_DROP: Callable[[int], object] = int


class HookCost:
    """Nanoseconds each of the capture's hook calls took, kept until the baseline ends.

    `add` is the hot path, paid inside every timed step: a builtin (an array's append), never a
    Python call of its own; callers look it up at each call, since it changes when the account
    closes. The figures are read after the baseline, from the calls kept.
    """

    def __init__(self) -> None:
        self._each = array("q")  # each call's ns, in order
        self.add: Callable[[int], object] = self._each.append
        self._at_baseline: int | None = None  # index of the baseline's first call
        self._end: int | None = None  # one past its last, once the baseline ended
        self._event_ns = 0  # when the last phase began: a call spanning it is charged after it

    def reset(self) -> None:
        """A new capture starts counting from zero."""
        self.__init__()  # type: ignore[misc]

    @property
    def ns(self) -> int:
        """Nanoseconds charged so far (while the account is open)."""
        return sum(self._each)

    @property
    def calls(self) -> int:
        """Calls charged so far (while the account is open)."""
        return len(self._each)

    def timed(self, fn: F) -> F:
        """`fn` (a hook wholly ours) charging its own time on every call."""
        now, cost = time.perf_counter_ns, self

        @functools.wraps(fn)
        def charged(*args: Any, **kwargs: Any) -> Any:
            t0 = now()
            try:
                return fn(*args, **kwargs)
            finally:
                # a step boundary that started a phase charges that phase only what came after
                cost.add(now() - max(t0, cost._event_ns))

        return charged  # type: ignore[return-value]

    def on_event(self, event: str) -> None:
        """'baseline' starts the baseline's count; a phase after it ('capture', 'done') ends it
        and closes the account, as does the capture starting with no baseline at all."""
        self._event_ns = time.perf_counter_ns()
        if event == "baseline":
            self._at_baseline = len(self._each)
        elif event != "last_warmup" and self._end is None:
            self._end = len(self._each)
            self.add = _DROP

    def to_meta(self, sampler_cpu_ms: float | None) -> CaptureCostMeta | None:
        """The baseline's figures (None when no baseline phase ran: nothing to state)."""
        first = self._at_baseline
        if first is None:
            return None
        end = self._end if self._end is not None else len(self._each)  # ended inside it
        each = self._each[first:end]
        out: CaptureCostMeta = {"hooks_ms": round(sum(each) / 1e6, 4), "hook_calls": len(each),
                                "sampler_cpu_ms": round(sampler_cpu_ms or 0.0, 4)}
        if each:
            # a total made of one long call (a collector pass that our allocation started)
            # reads differently from a cost every step pays: the median call tells them apart
            out["median_call_us"] = round(statistics.median(each) / 1e3, 2)
            out["max_call_us"] = round(max(each) / 1e3, 1)
        return out


#: the process's one account (one capture runs per process: capture/session.py)
COST = HookCost()
