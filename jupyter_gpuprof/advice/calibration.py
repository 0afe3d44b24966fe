"""What the calibration record says about each fix: how far its predictions were off.

The record (`store/calibration.py`) holds one entry per judged try. Here it becomes, per fix
and GPU, the number of tries and, over the tries whose change was significant and that had a
prediction, the mean absolute error, the worst error and the mean signed bias, all in points
of the step (predicted − measured: a positive bias means the predictions ran high). The
correction rule (`corrected_gain`) moves a new prediction by that bias once enough tries back
it (`thresholds.CALIBRATION_MIN_TRIES`, at most `CALIBRATION_MAX_SHIFT_PTS`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..store.calibration import CalibrationEntry, TryConditions
from ..store.meta_blocks import TryMeta
from .fix_table import CATEGORY_OF
from .thresholds import CALIBRATION_MAX_SHIFT_PTS, CALIBRATION_MIN_TRIES, FINGERPRINT_KERNELS


@dataclass(frozen=True)
class FixRecord:
    """One fix on one GPU as the record has it (errors in points of the step)."""

    fix: str
    category: str | None
    gpu_name: str | None
    n_tries: int  # every try of the fix, crashed ones included
    n_significant: int  # tries whose change was significant and that had a prediction
    n_errors: int  # tries that crashed or measured nothing
    mean_abs_error_pts: float | None  # None: no significant try yet
    worst_error_pts: float | None  # the largest |predicted − measured|
    mean_bias_pts: float | None  # mean of predicted − measured (> 0: predictions ran high)


def workload_fingerprint(code: str | None, kernel_names: Iterable[str]) -> str:
    """12 hex digits of SHA-256 over the run's code (the cell, or the command of a script),
    its whitespace collapsed, and the names of its top `FINGERPRINT_KERNELS` kernels: the same
    training on the same GPU gets the same fingerprint run after run."""
    text = "\n".join([" ".join((code or "").split()),
                      *list(kernel_names)[:FINGERPRINT_KERNELS]])
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _conditions(t: TryMeta) -> TryConditions | None:
    c = t.get("conditions")
    if not c or not c.get("available"):
        return None
    sm = c.get("sm_clock_mhz")
    return {"sm_clock_mhz": sm["median"] if sm else None, "throttle": list(c.get("throttle", []))}


def entries_of_tries(tries: Sequence[TryMeta], *, gpu_name: str | None, workload: str,
                     run_id: str, source: str, created: str) -> list[CalibrationEntry]:
    """One record entry per judged try (`advice.tries.judge_tries`' output)."""
    out: list[CalibrationEntry] = []
    for t in tries:
        change: Mapping[str, object] = t.get("change") or {}
        measured = t.get("measured_gain_pct")
        out.append({
            "fix": t["fix"], "category": CATEGORY_OF.get(t["fix"]), "gpu_name": gpu_name,
            "workload": workload, "conditions": _conditions(t),
            "predicted_gain_pct": t.get("predicted_gain_pct"), "measured_gain_pct": measured,
            "significant": bool(change.get("significant")) if change else None,
            "error": t.get("error"),
            "run_id": run_id, "source": source, "created": created})
    return out


def summarize_record(entries: Iterable[CalibrationEntry], gpu_name: str | None = None,
                     every_gpu: bool = False) -> list[FixRecord]:
    """Per fix (on `gpu_name`, or on each GPU with `every_gpu`): its tries and how far the
    significant ones' predictions were from what they measured; in the fix table's order."""
    groups: dict[tuple[str, str | None], list[CalibrationEntry]] = {}
    for e in entries:
        if every_gpu or e["gpu_name"] == gpu_name:
            groups.setdefault((e["fix"], e["gpu_name"]), []).append(e)
    order = {name: i for i, name in enumerate(CATEGORY_OF)}
    rows = []
    for (fix, gpu), group in sorted(groups.items(), key=lambda kv: (
            order.get(kv[0][0], len(order)), kv[0][0], kv[0][1] or "")):
        errors = [e["predicted_gain_pct"] - e["measured_gain_pct"] for e in group
                  if e["significant"] and e["predicted_gain_pct"] is not None
                  and e["measured_gain_pct"] is not None]
        rows.append(FixRecord(
            fix=fix, category=group[-1]["category"], gpu_name=gpu, n_tries=len(group),
            n_significant=len(errors), n_errors=sum(1 for e in group if e["error"]),
            mean_abs_error_pts=sum(abs(x) for x in errors) / len(errors) if errors else None,
            worst_error_pts=max(abs(x) for x in errors) if errors else None,
            mean_bias_pts=sum(errors) / len(errors) if errors else None))
    return rows


def corrected_gain(predicted_pct: float | None, row: FixRecord) -> float | None:
    """The prediction moved by the record's mean bias, once `CALIBRATION_MIN_TRIES`
    significant tries of the fix on this GPU back it; the shift is clamped to
    ±`CALIBRATION_MAX_SHIFT_PTS` and the result to 0–100 %. None: no correction applies."""
    if (predicted_pct is None or row.mean_bias_pts is None
            or row.n_significant < CALIBRATION_MIN_TRIES):
        return None
    shift = max(-CALIBRATION_MAX_SHIFT_PTS, min(CALIBRATION_MAX_SHIFT_PTS, row.mean_bias_pts))
    return max(0.0, min(100.0, predicted_pct - shift))


def predictions_by_fix(findings: Sequence[Mapping[str, object]]) -> dict[str, float | None]:
    """Each fix the findings name (`try_fixes`), with its finding's expected gain; first
    finding wins."""
    out: dict[str, float | None] = {}
    for f in findings:
        gain = f.get("expected_gain_pct")
        fixes = f.get("try_fixes")
        for fix in fixes if isinstance(fixes, list) else []:
            out.setdefault(str(fix), float(gain) if isinstance(gain, (int, float)) else None)
    return out
