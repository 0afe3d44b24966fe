"""Filling one try's record (`store.meta_blocks.TryMeta`): its headline figures, its losses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from ..stats import headline_steps
from ..store.meta_blocks import TryMeta


class LossComparison(TypedDict):
    """The try's first losses against the original's, from the same starting state."""

    loss_original: list[float]
    loss_fixed: list[float]
    loss_rel_diff: float | None


def add_headline(record: TryMeta, step_ms: Sequence[float]) -> None:
    """Add n, median, p95, mean, min and max of the step times (`stats.headline_steps`)."""
    head = headline_steps(step_ms)
    record["n"] = head["n"]
    record["median_ms"] = head["median_ms"]
    record["p95_ms"] = head["p95_ms"]
    record["mean_ms"] = head["mean_ms"]
    record["min_ms"] = head["min_ms"]
    record["max_ms"] = head["max_ms"]
