"""Whether step times given as an unprofiled baseline can be one: finite, positive, plausible.

A baseline typed by hand (`analyze --baseline-ms`) rescales every figure of the report; a wrong
unit (seconds, microseconds) or a typo would make it "9e303× the baseline" with confidence.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import units

#: the most a profiler slows a step (launch-bound steps of tiny kernels: a few times; 50 leaves
#: room) and the most an unprofiled step may be slower than a profiled one (input stalls the
#: short profiled window missed; the recorded corpus has 0.46x to 2.7x)
MAX_PROFILER_SLOWDOWN = 50.0
MAX_BASELINE_SLOWER = 20.0
#: a step time below a microsecond or above a day is not a training step's (ms)
MIN_STEP_MS, MAX_STEP_MS = 1e-3, 86_400e3


class BaselineError(ValueError):
    """Baseline step times that cannot be the unprofiled steps; the message says why."""


def check_baseline(step_ms: Sequence[float], profiled_median_ms: float | None = None) -> None:
    """Raise `BaselineError` unless every time is a finite, positive step time and, when the
    profiled steps are known, their median is within a profiler's slowdown of them."""
    if not step_ms:
        raise BaselineError("no step times given: give one or more in ms, e.g. 12.5,12.7")
    for v in step_ms:
        if not math.isfinite(v):
            raise BaselineError(f"{v} is not a finite number of milliseconds")
        if v <= 0:
            raise BaselineError(f"{v:g} ms: step times must be positive")
        if not MIN_STEP_MS <= v <= MAX_STEP_MS:
            raise BaselineError(f"{v:g} ms is not a step time (between {MIN_STEP_MS:g} ms and "
                                "a day): are the times in milliseconds?")
    if profiled_median_ms is None or not profiled_median_ms > 0:
        return
    base = sorted(step_ms)[len(step_ms) // 2]
    prof, ratio = units.ms(profiled_median_ms), profiled_median_ms / base
    if ratio > MAX_PROFILER_SLOWDOWN:
        why = (f"the profiled steps take {prof}, {ratio:.3g}× the baseline's {units.ms(base)}; a "
               f"profiler slows a step at most {MAX_PROFILER_SLOWDOWN:g}×")
    elif ratio < 1 / MAX_BASELINE_SLOWER:
        why = (f"the baseline's {units.ms(base)} is {1 / ratio:.3g}× the profiled steps' {prof}; "
               f"an unprofiled step is not {MAX_BASELINE_SLOWER:g}× slower than a profiled one")
    else:
        return
    raise BaselineError(f"{why}: are the times in milliseconds, and of this trace's script?")
