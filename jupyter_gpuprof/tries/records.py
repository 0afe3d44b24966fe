"""The shape of one try's record: tries/<fix>.json as measured, meta.json's `tries` once judged.

Plain dicts at runtime (written with json.dumps), typed here so every step of `--try` reads the
same keys; `report.model_cost.TryResult` is the same record as the summary decodes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Required, TypedDict

from ..capture.conditions import ConditionsSummary
from ..stats import headline_steps


class LossComparison(TypedDict):
    """The try's first losses against the original's, from the same starting state."""

    loss_original: list[float]
    loss_fixed: list[float]
    loss_rel_diff: float | None


class StepChange(TypedDict, total=False):
    """A try's change against the baseline (analysis.compare.step_change; report: StepChange)."""

    n_before: int
    n_after: int
    median_before_ms: float | None
    median_after_ms: float | None
    delta_ms: float | None
    delta_pct: float | None
    ci_low_ms: float | None
    ci_high_ms: float | None
    ci_low_pct: float | None
    ci_high_pct: float | None
    p_value: float | None
    confidence: float
    verdict: str  # significant | noise | unreliable | insufficient data
    significant: bool
    speedup: float | None
    direction: str  # faster | slower | unchanged
    unreliable_reasons: list[str]


class TryRecord(TypedDict, total=False):
    """One fix tried: what it measured (or why it measured nothing), and once judged
    (advice/tries.py) its change against the baseline and its measured gain."""

    fix: Required[str]
    error: str  # why the try measured nothing (its first line)
    source: str  # "script" for `run --try`
    applied: list[str]  # what the fix changed (a script's try)
    step_ms: list[float]
    warmup_ms: list[float]
    timing: str | None  # the clock the steps were timed with
    n: int
    median_ms: float | None
    p95_ms: float | None
    mean_ms: float | None
    min_ms: float | None
    max_ms: float | None
    peak_memory_bytes: int | None
    compiled_graphs: int
    loss_original: list[float]
    loss_fixed: list[float]
    loss_rel_diff: float | None
    conditions: ConditionsSummary | None
    # set by advice/tries.py's judge_tries
    reference: str  # the control the try was measured against
    change: StepChange
    predicted_gain_pct: float | None
    measured_gain_pct: float | None


def add_headline(record: TryRecord, step_ms: Sequence[float]) -> None:
    """Add n, median, p95, mean, min and max of the step times (`stats.headline_steps`)."""
    head = headline_steps(step_ms)
    record["n"] = head["n"]
    record["median_ms"] = head["median_ms"]
    record["p95_ms"] = head["p95_ms"]
    record["mean_ms"] = head["mean_ms"]
    record["min_ms"] = head["min_ms"]
    record["max_ms"] = head["max_ms"]
