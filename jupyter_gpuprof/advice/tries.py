"""Judge the fixes `--try` measured: change against the baseline, beside the predicted gain.

The measurement (tries/notebook.py) hands raw step times; here each try gets the same
statistics as `compare` (median change, 95 % bootstrap interval, Mann-Whitney, `unreliable`
when the GPU ran under other conditions), its gain next to the what-if prediction of the
finding it fixes, and the tries are ranked by measured gain.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..analysis.compare import step_change
from .findings import Finding
from .fix_table import CATEGORY_OF

#: the control of a script's tries: the command re-run without a fix (`run --try`)
CONTROL = "none"


def judge_tries(raw: list[dict[str, Any]], baseline_ms: list[float],
                baseline_conditions: dict[str, Any] | None,
                findings: list[dict[str, Any]],
                control: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Each try with `change`, `measured_gain_pct` and `predicted_gain_pct`; best first. With a
    `control` (the script re-run unchanged, in a process like the tries'), each try is
    measured against it, pair to pair: the run's own baseline ran with the capture installed
    and at another time, so a difference from it can be the rerun's, not the fix's."""
    predicted = {f.get("category"): f.get("expected_gain_pct") for f in findings}
    paired = bool(control and not control.get("error") and control.get("step_ms"))
    if paired:
        assert control is not None
        baseline_ms, baseline_conditions = control["step_ms"], control.get("conditions")
    out = []
    for t in raw:
        t = dict(t)
        t["predicted_gain_pct"] = predicted.get(CATEGORY_OF.get(t["fix"], ""))
        if paired:
            t["reference"] = CONTROL
        if not t.get("error") and t.get("step_ms"):
            ch = step_change(baseline_ms, t["step_ms"],
                             conditions=(baseline_conditions, t.get("conditions")))
            t["change"] = ch
            before, after = ch["median_before_ms"], ch["median_after_ms"]
            t["measured_gain_pct"] = (100.0 * (1 - after / before)
                                      if before and after is not None else None)
        out.append(t)
    return sorted(out, key=lambda t: -(t.get("measured_gain_pct") or -1e9))


def measured_gains(tries: list[dict[str, Any]]) -> dict[str, float]:
    """Each category's best gain a significant try measured."""
    best: dict[str, float] = {}
    for t in tries:
        cat = CATEGORY_OF.get(t["fix"])
        ch = t.get("change") or {}
        if cat and ch.get("significant") and t.get("measured_gain_pct") is not None:
            best[cat] = max(best.get(cat, -1e9), t["measured_gain_pct"])
    return best


def rerank(findings: list[Finding], tries: list[dict[str, Any]]) -> list[Finding]:
    """Findings with their measured gain, ranked by it where a significant try measured one
    (by the expected gain otherwise)."""
    best = measured_gains(tries)
    ranked = [dataclasses.replace(f, measured_gain_pct=best.get(f.category)) for f in findings]
    return sorted(ranked, key=lambda f: -(f.measured_gain_pct if f.measured_gain_pct is not None
                                          else f.expected_gain_pct or 0))


def rerank_findings(findings: list[dict[str, Any]],
                    tries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Findings (as JSON) re-ranked by measured gain where a significant try measured one."""
    best = measured_gains(tries)
    ranked = [{**f, "measured_gain_pct": best.get(str(f.get("category")))} for f in findings]
    return sorted(ranked, key=lambda f: -(f["measured_gain_pct"] if f["measured_gain_pct"]
                                          is not None else f.get("expected_gain_pct") or 0))
