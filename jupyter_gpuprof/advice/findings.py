"""Advice as data: a Finding per bottleneck and the Verdict that names the main one."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..categories import CATEGORIES, NO_VERDICT

__all__ = ["CATEGORIES", "Finding", "Verdict"]


@dataclass
class Finding:
    """One measured bottleneck: what was seen, what to change, and what it should gain."""

    id: str
    category: str
    title: str
    evidence: str
    fix: str
    cost_ms: float  # real time per step this bottleneck costs
    expected_gain_pct: float  # of the wall time per step (median + stalls), after the fix
    data: dict[str, Any] = field(default_factory=dict)
    predicted_step_ms: float | None = None  # the what-if replay's step with the fix applied
    driver: str = ""  # which change to the step's graph produced the prediction
    where: dict[str, Any] | None = None  # the user's line behind it (advice.patterns.where_for)
    measured_gain_pct: float | None = None  # what a significant try of its fix measured
    #: of the median step, where the baseline has stalls (the wall time differs from it)
    step_gain_pct: float | None = None
    predicted_wall_ms: float | None = None  # a step over the long run with the fix, likewise

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


@dataclass
class Verdict:
    """The primary reason the step is not faster, how sure we are, and why."""

    category: str | None
    summary: str
    confidence: str  # high | medium | low
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    def __str__(self) -> str:
        return self.category or NO_VERDICT
