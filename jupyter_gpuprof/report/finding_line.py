"""A finding's cost and its gain in one line, so "costs 0.19 ms" never stands beside "≈14 %"
without the predicted step that reconciles them; every view prints this line as it is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import units


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def cost_line(finding: Mapping[str, Any], median_ms: float | None,
              wall_ms: float | None = None) -> str:
    """`costs 0.19 ms of the 63.7 ms step; predicted step 63.7 → 54.7 ms, gain ≈14%`: the
    finding's direct cost (ms per real step), the step it is part of, the what-if replay's
    step with the fix (a step over the long run first, where stalls make one cost more than
    the median) and the expected gain that prediction gives."""
    cost, pred = _num(finding.get("cost_ms")), _num(finding.get("predicted_step_ms"))
    wall = _num(finding.get("predicted_wall_ms"))
    gain = units.pct(_num(finding.get("expected_gain_pct")))
    step = f" of the {units.ms(median_ms)} step" if median_ms is not None else ""
    parts = [f"costs {units.ms(cost)}{step}"]
    said = []
    if wall is not None and wall_ms is not None:
        said.append(f"a step over the long run {units.ms(wall_ms)} → {units.ms(wall)}")
    if pred is not None and median_ms is not None:
        said.append(f"{'median ' if said else ''}step {units.ms(median_ms)} → {units.ms(pred)}")
    parts.append(f"predicted {'; '.join(said)}, gain ≈{gain}" if said else f"gain ≈{gain}")
    return "; ".join(parts)
