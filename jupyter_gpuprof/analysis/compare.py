"""Before/after comparison of two run summaries: is the step-time change real, and what moved.

Pure functions over `Report.to_json()` dicts and step-time lists (no I/O, no plotting).

Step-time change: the median difference (after - before) with a percentile-bootstrap confidence
interval (resampling each run's steps independently, fixed seed so answers are reproducible)
and a two-sided Mann-Whitney U test (normal approximation with tie correction). The change is
``significant`` only when the interval excludes zero, the test agrees (p < ALPHA) and the change
is at least MIN_EFFECT_PCT of the before median; otherwise it is ``noise``. When the two sides
ran under different GPU conditions (`conditions.condition_changes`) it is ``unreliable``, never
``significant``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .conditions import condition_changes

ALPHA = 0.05
CONFIDENCE = 0.95
N_BOOTSTRAP = 4000
MIN_EFFECT_PCT = 1.0  # smaller changes are within run-to-run drift of a GPU, whatever the test says
MIN_SAMPLES = 3
TOP_DELTAS = 10
SEED = 0


def _clean(values: Any) -> np.ndarray:
    items = [] if values is None else list(values)
    arr = np.asarray([v for v in items if isinstance(v, (int, float, np.number))
                      and not isinstance(v, bool)], dtype=float)
    finite: np.ndarray = arr[np.isfinite(arr)]
    return finite


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    both = np.concatenate([a, b])
    order = both.argsort(kind="mergesort")
    ranks = np.empty(len(both))
    sorted_vals = both[order]
    # average ranks over ties
    _, first, counts = np.unique(sorted_vals, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    n = n1 + n2
    tie = float((counts**3 - counts).sum()) / (n * (n - 1)) if n > 1 else 0.0
    var = n1 * n2 / 12.0 * ((n + 1) - tie)
    if var <= 0:
        return 1.0
    z = (abs(u1 - n1 * n2 / 2.0) - 0.5) / math.sqrt(var)  # continuity correction
    return float(min(1.0, math.erfc(max(z, 0.0) / math.sqrt(2.0))))


def bootstrap_median_diff_ci(
    a: np.ndarray, b: np.ndarray, n_boot: int = N_BOOTSTRAP, confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float]:
    """Percentile-bootstrap interval of median(b) - median(a)."""
    rng = np.random.default_rng(seed)
    ma = np.median(a[rng.integers(0, len(a), (n_boot, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), (n_boot, len(b)))], axis=1)
    lo, hi = np.quantile(mb - ma, [(1 - confidence) / 2, 1 - (1 - confidence) / 2])
    return float(lo), float(hi)


def step_change(before_ms: Any, after_ms: Any, seed: int = SEED,
                conditions: tuple[Any, Any] | None = None) -> dict[str, Any]:
    """Median change of step time (after vs before) with its interval, p-value and verdict.

    `conditions`: the GPU conditions (before, after) each side ran under, when recorded.
    """
    a, b = _clean(before_ms), _clean(after_ms)
    out: dict[str, Any] = {
        "n_before": len(a), "n_after": len(b),
        "median_before_ms": float(np.median(a)) if len(a) else None,
        "median_after_ms": float(np.median(b)) if len(b) else None,
        "delta_ms": None, "delta_pct": None, "ci_low_ms": None, "ci_high_ms": None,
        "ci_low_pct": None, "ci_high_pct": None, "p_value": None,
        "confidence": CONFIDENCE, "verdict": "insufficient data", "significant": False,
        "speedup": None, "direction": "unchanged",
        "unreliable_reasons": condition_changes(*conditions) if conditions else [],
    }
    if len(a) < MIN_SAMPLES or len(b) < MIN_SAMPLES:
        return out
    med_a, med_b = out["median_before_ms"], out["median_after_ms"]
    lo, hi = bootstrap_median_diff_ci(a, b, seed=seed)
    p = mann_whitney_p(a, b)
    delta = med_b - med_a
    pct = 100.0 * delta / med_a if med_a else None
    excludes_zero = lo > 0 or hi < 0
    significant = bool(excludes_zero and p < ALPHA and pct is not None
                       and abs(pct) >= MIN_EFFECT_PCT and not out["unreliable_reasons"])
    out.update({
        "delta_ms": delta, "delta_pct": pct, "ci_low_ms": lo, "ci_high_ms": hi,
        "ci_low_pct": 100.0 * lo / med_a if med_a else None,
        "ci_high_pct": 100.0 * hi / med_a if med_a else None,
        "p_value": p, "significant": significant,
        "verdict": ("unreliable" if out["unreliable_reasons"] else
                    "significant" if significant else "noise"),
        "direction": ("faster" if delta < 0 else "slower") if significant else "unchanged",
        "speedup": med_a / med_b if med_b else None,
    })
    return out


def table_deltas(before: list[dict[str, Any]], after: list[dict[str, Any]], key: str,
                 value: str, top: int = TOP_DELTAS, per_before: float = 1.0,
                 per_after: float = 1.0) -> dict[str, list[dict[str, Any]]]:
    """Per-name change of one column (e.g. ops' cuda_total_us): top regressions and improvements.

    Totals are divided by ``per_before``/``per_after`` (the profiled step counts) so windows of
    different lengths compare per step. Rows missing on one side count as 0 there (an op that
    disappeared is an improvement).
    """
    def totals(rows: list[dict[str, Any]], per: float) -> dict[str, float]:
        acc: dict[str, float] = {}
        for r in rows or []:
            name, v = r.get(key), r.get(value)
            if name is None or not isinstance(v, (int, float)):
                continue
            acc[str(name)] = acc.get(str(name), 0.0) + float(v) / per
        return acc

    ta, tb = totals(before, per_before or 1.0), totals(after, per_after or 1.0)
    rows: list[dict[str, Any]] = []
    for name in ta.keys() | tb.keys():
        va, vb = ta.get(name, 0.0), tb.get(name, 0.0)
        rows.append({"name": name, "before": va, "after": vb, "delta": vb - va,
                     "delta_pct": 100.0 * (vb - va) / va if va else None})
    rows.sort(key=lambda r: (r["delta"], r["name"]))
    improvements = [r for r in rows if r["delta"] < 0][:top]
    regressions = [r for r in reversed(rows) if r["delta"] > 0][:top]
    return {"regressions": regressions, "improvements": improvements}


def _step_samples(summary: dict[str, Any], override: Any = None) -> tuple[list[float], str]:
    """The step times to compare: the unprofiled baseline, else the profiled steps."""
    if override is not None and len(override):
        return list(_clean(override)), "baseline"
    steps = summary.get("steps") or {}
    if steps.get("baseline_ms"):
        return list(_clean(steps["baseline_ms"])), "baseline"
    return list(_clean(steps.get("profiled_ms"))), "profiled"


def _profiled_steps(summary: dict[str, Any]) -> float:
    """How many steps the trace window holds (tables are totals over it)."""
    n = ((summary.get("steps") or {}).get("profiled") or {}).get("n")
    return float(n) if isinstance(n, (int, float)) and n > 0 else 1.0


def _side(summary: dict[str, Any]) -> dict[str, Any]:
    src, v = summary.get("source") or {}, summary.get("verdict") or {}
    steps = summary.get("steps") or {}
    return {
        "name": src.get("name") or src.get("run_id") or src.get("path"),
        "run_id": src.get("run_id"), "gpu": src.get("gpu"),
        "median_ms": steps.get("median_ms"), "p95_ms": steps.get("p95_ms"),
        "verdict": {"category": v.get("category"), "summary": v.get("summary"),
                    "confidence": v.get("confidence")},
        "findings": [{"id": f.get("id"), "category": f.get("category"), "title": f.get("title"),
                      "expected_gain_pct": f.get("expected_gain_pct")}
                     for f in summary.get("findings") or []],
    }


def compare_summaries(before: dict[str, Any], after: dict[str, Any],
                      before_steps: Any = None, after_steps: Any = None) -> dict[str, Any]:
    """The whole comparison as one JSON-ready dict (what the REST route and the CLI print)."""
    sa, src_a = _step_samples(before, before_steps)
    sb, src_b = _step_samples(after, after_steps)
    na, nb = _profiled_steps(before), _profiled_steps(after)
    fa = {f["id"] for f in _side(before)["findings"]}
    fb = {f["id"] for f in _side(after)["findings"]}
    return {
        "before": {**_side(before), "step_ms": sa, "step_source": src_a},
        "after": {**_side(after), "step_ms": sb, "step_source": src_b},
        "steps": step_change(sa, sb, conditions=(before.get("conditions"),
                                                  after.get("conditions"))),
        "ops": table_deltas(before.get("ops") or [], after.get("ops") or [],
                            "name", "cuda_total_us", per_before=na, per_after=nb),
        "kernel_kinds": table_deltas(before.get("kernel_kinds") or [],
                                     after.get("kernel_kinds") or [], "kind", "total_us",
                                     per_before=na, per_after=nb),
        "delta_unit": "us_per_step",
        "findings": {"resolved": sorted(fa - fb), "new": sorted(fb - fa),
                     "remaining": sorted(fa & fb)},
    }
