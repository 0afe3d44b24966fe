"""Step-time statistics, defined once: the magic's line, the report and the run list call this.

A leaf module (numpy only, nothing of ours) so that capture, analysis and the server can all
import it without breaking the import rules. Percentiles are numpy's default, linear
interpolation between the closest ranks: p95 of the step times 1…30 is 28.55 everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, TypedDict

import numpy as np

#: Tukey's fences: outside [q1 - k*IQR, q3 + k*IQR] is an outlier
TUKEY_K = 1.5
#: numpy's percentile method, named so no surface picks another one
PERCENTILE_METHOD: Final = "linear"


class HeadlineSteps(TypedDict):
    """The figures of a series shown on one line (the magic's line, a `--try` result)."""

    n: int
    median_ms: float | None
    p95_ms: float | None
    mean_ms: float | None
    min_ms: float | None
    max_ms: float | None


class StepStats(HeadlineSteps):
    """Every figure `describe_steps` gives: the headline's, quartiles and outliers."""

    q1_ms: float | None
    q3_ms: float | None
    iqr_ms: float | None
    outliers: list[int]  # indices into the series, by Tukey's fences


def describe_steps(step_ms: Sequence[float | None]) -> StepStats:
    """n, median/p95/mean/min/max, quartiles, IQR and outlier indices of step times (ms).

    Missing and non-finite values are left out; with none left every figure is None.
    """
    x = np.asarray([v for v in step_ms if v is not None and np.isfinite(v)], dtype=np.float64)
    if len(x) == 0:
        return StepStats(n=0, median_ms=None, p95_ms=None, mean_ms=None, min_ms=None,
                         max_ms=None, q1_ms=None, q3_ms=None, iqr_ms=None, outliers=[])
    q1, med, q3, p95 = np.percentile(x, [25, 50, 75, 95], method=PERCENTILE_METHOD)
    iqr = q3 - q1
    out = np.flatnonzero((x < q1 - TUKEY_K * iqr) | (x > q3 + TUKEY_K * iqr))
    with np.errstate(over="ignore"):  # a sum past the float range: inf, read as unknown
        mean = float(x.mean())
    return StepStats(
        n=int(len(x)), median_ms=float(med), p95_ms=float(p95),
        mean_ms=mean, min_ms=float(x.min()), max_ms=float(x.max()),
        q1_ms=float(q1), q3_ms=float(q3), iqr_ms=float(iqr),
        outliers=[int(i) for i in out],
    )


def headline_steps(step_ms: Sequence[float | None]) -> HeadlineSteps:
    """n, median, p95, mean, min and max of step times (ms): `describe_steps`' own figures."""
    d = describe_steps(step_ms)
    return HeadlineSteps(n=d["n"], median_ms=d["median_ms"], p95_ms=d["p95_ms"],
                         mean_ms=d["mean_ms"], min_ms=d["min_ms"], max_ms=d["max_ms"])
