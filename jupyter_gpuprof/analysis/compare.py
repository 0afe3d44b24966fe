"""Before/after comparison of two run summaries: is the step-time change real, and what moved.

Pure functions over `Report.to_json()` dicts and step-time lists (no I/O, no plotting).

Step-time change: the median difference (after - before) with a percentile-bootstrap confidence
interval (resampling each run's steps independently, fixed seed so answers are reproducible)
and a two-sided Mann-Whitney U test (normal approximation with tie correction). The change is
``significant`` only when the interval excludes zero, the test agrees (p < ALPHA) and the change
is at least MIN_EFFECT_PCT of the before median; otherwise it is ``noise``. When both sides
were measured in interleaved rounds (a notebook's tries: control, fix, control, fix...), the
rounds must agree too: a sign test over the rounds' paired medians below ROUNDS_ALPHA. Steps
within a block are not independent draws (a host that changes speed moves a whole block), so
the step-level tests alone read a no-op fix "significant" in 7 of 10 A/A rounds on a shared
CPU (docs/benchmarks.md, section 16). When the two sides
ran under different GPU conditions (`conditions.condition_changes`) it is ``unreliable``, never
``significant``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import numpy as np

from ..store.meta_blocks import StepChangeMeta
from .compare_words import headline, side_labels
from .conditions import condition_changes, shared_handicaps

ALPHA = 0.05
CONFIDENCE = 0.95
N_BOOTSTRAP = 4000
MIN_EFFECT_PCT = 1.0  # smaller changes are within run-to-run drift of a GPU, whatever the test says
MIN_SAMPLES = 3
ROUNDS_ALPHA = 0.01  # the A/A target: at most 1 no-op try in 100 reads significant
TOP_DELTAS = 10
SEED = 0
#: each side's steps the bootstrap resamples: more are thinned to this many, evenly spaced in
#: run order (the medians and the U test keep every step); 150k steps a side took 47 s and
#: 10 GB resampled whole, and an interval on 5,000 is, if anything, wider than on all of them
MAX_BOOTSTRAP_STEPS = 5000
BOOTSTRAP_BATCH = 200  # resamples drawn at once: memory is BATCH x steps, not N_BOOTSTRAP x


class DeltaRow(TypedDict):
    """One name's total per step on each side and its change."""

    name: str
    before_ms: float
    after_ms: float
    delta_ms: float
    delta_pct: float | None


class Deltas(TypedDict):
    """A table's largest per-name changes, each way."""

    regressions: list[DeltaRow]
    improvements: list[DeltaRow]


class SideVerdict(TypedDict):
    """A side's verdict, as its summary states it."""

    category: str | None
    summary: str | None
    confidence: str | None


class FindingBrief(TypedDict):
    """A side's finding, as far as the comparison names it."""

    id: str | None
    category: str | None
    title: str | None
    expected_gain_pct: float | None
    measured_gain_pct: float | None  # what its fix's try measured, where one ran


class PredictionCheck(TypedDict):
    """The before run's predictions for the findings the after run no longer has, beside the
    gain this comparison measured: how right the report was about the fix the user applied."""

    resolved: list[FindingBrief]  # the before run's findings gone after
    measured_gain_pct: float | None  # of the median step, before → after
    ci_low_gain_pct: float | None  # the measured gain's 95 % interval
    ci_high_gain_pct: float | None
    verdict: str  # the step change's: significant | noise | unreliable | insufficient data


class ComparedRun(TypedDict):
    """One side of a comparison: which run, its step figures, verdict, findings and samples."""

    name: str | None
    label: str  # the name that tells it from the other side (compare_words.side_labels)
    created: str | None
    run_id: str | None
    gpu: str | None
    median_ms: float | None
    p95_ms: float | None
    verdict: SideVerdict
    findings: list[FindingBrief]
    step_ms: list[float]
    step_source: str  # baseline | profiled


class FindingChanges(TypedDict):
    """Finding ids gone, new and kept from before to after."""

    resolved: list[str]
    new: list[str]
    remaining: list[str]


class SummaryComparison(TypedDict):
    """The whole comparison (what the REST route and the CLI print)."""

    before: ComparedRun
    after: ComparedRun
    steps: StepChangeMeta
    ops: Deltas
    kernel_kinds: Deltas
    delta_unit: str  # ms_per_step: the tables' figures, as every other surface writes times
    headline: str  # the one sentence every view leads with (compare_words.headline)
    caveats: list[str]  # conditions both sides ran under (a power cap on both)
    findings: FindingChanges
    prediction: PredictionCheck


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
    seed: int = SEED, max_steps: int | None = MAX_BOOTSTRAP_STEPS,
) -> tuple[float, float]:
    """Percentile-bootstrap interval of median(b) - median(a), each side thinned to
    `max_steps` (evenly spaced in run order) and resampled BOOTSTRAP_BATCH times at once."""
    rng = np.random.default_rng(seed)
    a, b = thin(a, max_steps), thin(b, max_steps)
    ma, mb = _boot_medians(a, n_boot, rng), _boot_medians(b, n_boot, rng)
    lo, hi = np.quantile(mb - ma, [(1 - confidence) / 2, 1 - (1 - confidence) / 2])
    return float(lo), float(hi)


def _boot_medians(x: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """The medians of `n_boot` resamples of x, drawn BOOTSTRAP_BATCH at a time (the same
    draws, in the same order, as one (n_boot, len(x)) draw)."""
    out = np.empty(n_boot)
    for start in range(0, n_boot, BOOTSTRAP_BATCH):
        k = min(BOOTSTRAP_BATCH, n_boot - start)
        out[start:start + k] = np.median(x[rng.integers(0, len(x), (k, len(x)))], axis=1)
    return out


def thin(x: np.ndarray, limit: int | None) -> np.ndarray:
    """At most `limit` of the values, evenly spaced in their order (all of them: None)."""
    if limit is None or len(x) <= limit:
        return x
    kept: np.ndarray = x[np.linspace(0, len(x) - 1, limit).round().astype(int)]
    return kept


def rounds_sign_p(before: Sequence[float], after: Sequence[float]) -> tuple[float, int]:
    """Two-sided sign-test p of paired round medians, and the majority's direction (-1 after
    faster, +1 slower, 0 a tie); tied rounds are left out."""
    diffs = [b - a for a, b in zip(before, after, strict=False) if b != a]
    n, faster = len(diffs), sum(d < 0 for d in diffs)
    if n == 0:
        return 1.0, 0
    k = min(faster, n - faster)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2**n)
    return p, (-1 if faster > n - faster else 1 if faster < n - faster else 0)


def step_change(before_ms: Any, after_ms: Any, seed: int = SEED,
                conditions: tuple[object, object] | None = None,
                rounds: tuple[Sequence[float], Sequence[float]] | None = None
                ) -> StepChangeMeta:
    """Median change of step time (after vs before) with its interval, p-value and verdict.

    `conditions`: the GPU conditions (before, after) each side ran under, when recorded;
    `rounds`: each side's round medians, paired by round, when measured interleaved.
    """
    a, b = _clean(before_ms), _clean(after_ms)
    med_a = float(np.median(a)) if len(a) else None
    med_b = float(np.median(b)) if len(b) else None
    out: StepChangeMeta = {
        "n_before": len(a), "n_after": len(b),
        "median_before_ms": med_a,
        "median_after_ms": med_b,
        "delta_ms": None, "delta_pct": None, "ci_low_ms": None, "ci_high_ms": None,
        "ci_low_pct": None, "ci_high_pct": None, "p_value": None,
        "confidence": CONFIDENCE, "verdict": "insufficient data", "significant": False,
        "speedup": None, "direction": "unchanged",
        "unreliable_reasons": condition_changes(*conditions) if conditions else [],
    }
    if len(a) < MIN_SAMPLES or len(b) < MIN_SAMPLES or med_a is None or med_b is None:
        return out
    lo, hi = bootstrap_median_diff_ci(a, b, seed=seed)
    p = mann_whitney_p(a, b)
    delta = med_b - med_a
    pct = 100.0 * delta / med_a if med_a else None
    excludes_zero = lo > 0 or hi < 0
    if conditions and delta != 0:  # the faster side's own handicaps only understate its lead
        out["unreliable_reasons"] = condition_changes(
            *conditions, faster="after" if delta < 0 else "before")
    significant = bool(excludes_zero and p < ALPHA and pct is not None
                       and abs(pct) >= MIN_EFFECT_PCT and not out["unreliable_reasons"])
    if rounds is not None:
        rounds_p, majority = rounds_sign_p(*rounds)
        out["rounds_p_value"] = rounds_p
        # a Python bool: meta.json writes numpy's bool_ as the string "True"
        significant = bool(significant and rounds_p < ROUNDS_ALPHA
                           and majority == int(np.sign(delta)))
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


def table_deltas(before: Sequence[Mapping[str, object]], after: Sequence[Mapping[str, object]],
                 key: str, value: str, top: int = TOP_DELTAS, per_before: float = 1.0,
                 per_after: float = 1.0, scale: float = 1.0) -> Deltas:
    """Per-name change of one column (e.g. ops' cuda_total_us): top regressions and improvements.

    Totals are divided by ``per_before``/``per_after`` (the profiled step counts) so windows of
    different lengths compare per step, then multiplied by ``scale`` (1e-3: µs columns to ms).
    Rows missing on one side count as 0 there (an op that disappeared is an improvement).
    """
    def totals(rows: Sequence[Mapping[str, object]], per: float) -> dict[str, float]:
        acc: dict[str, float] = {}
        for r in rows or []:
            name, v = r.get(key), r.get(value)
            if name is None or not isinstance(v, (int, float)):
                continue
            acc[str(name)] = acc.get(str(name), 0.0) + float(v) * scale / per
        return acc

    ta, tb = totals(before, per_before or 1.0), totals(after, per_after or 1.0)
    rows: list[DeltaRow] = []
    for name in ta.keys() | tb.keys():
        va, vb = ta.get(name, 0.0), tb.get(name, 0.0)
        rows.append({"name": name, "before_ms": va, "after_ms": vb, "delta_ms": vb - va,
                     "delta_pct": 100.0 * (vb - va) / va if va else None})
    rows.sort(key=lambda r: (r["delta_ms"], r["name"]))
    improvements = [r for r in rows if r["delta_ms"] < 0][:top]
    regressions = [r for r in reversed(rows) if r["delta_ms"] > 0][:top]
    return {"regressions": regressions, "improvements": improvements}


def _part(x: object) -> Mapping[str, object]:
    """A block of a summary as a mapping ({} when missing)."""
    return x if isinstance(x, Mapping) else {}


def _rows(x: object) -> list[Mapping[str, object]]:
    """A table of a summary as its rows ([] when missing)."""
    return [r for r in x if isinstance(r, Mapping)] if isinstance(x, list) else []


def _text(x: object) -> str | None:
    """A text field of a summary (None when missing)."""
    return x if isinstance(x, str) else None


def _number(x: object) -> float | None:
    """A numeric field of a summary, as it is (None when missing)."""
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def _step_samples(summary: Mapping[str, object], override: Any = None
                  ) -> tuple[list[float], str]:
    """The step times to compare: the unprofiled baseline, else the profiled steps."""
    if override is not None and len(override):
        return list(_clean(override)), "baseline"
    steps = _part(summary.get("steps"))
    if steps.get("baseline_ms"):
        return list(_clean(steps["baseline_ms"])), "baseline"
    return list(_clean(steps.get("profiled_ms"))), "profiled"


def _profiled_steps(summary: Mapping[str, object]) -> float:
    """How many steps the trace window holds (tables are totals over it)."""
    n = _part(_part(summary.get("steps")).get("profiled")).get("n")
    return float(n) if isinstance(n, (int, float)) and n > 0 else 1.0


def _side(summary: Mapping[str, object], step_ms: list[float], source: str,
          label: str) -> ComparedRun:
    src, v = _part(summary.get("source")), _part(summary.get("verdict"))
    steps = _part(summary.get("steps"))
    return {
        "name": _text(src.get("name") or src.get("run_id") or src.get("path")),
        "label": label, "created": _text(src.get("created")),
        "run_id": _text(src.get("run_id")), "gpu": _text(src.get("gpu")),
        "median_ms": _number(steps.get("median_ms")), "p95_ms": _number(steps.get("p95_ms")),
        "verdict": {"category": _text(v.get("category")), "summary": _text(v.get("summary")),
                    "confidence": _text(v.get("confidence"))},
        "findings": [{"id": _text(f.get("id")), "category": _text(f.get("category")),
                      "title": _text(f.get("title")),
                      "expected_gain_pct": _number(f.get("expected_gain_pct")),
                      "measured_gain_pct": _number(f.get("measured_gain_pct"))}
                     for f in _rows(summary.get("findings"))],
        "step_ms": step_ms, "step_source": source,
    }


def compare_summaries(before: Mapping[str, object], after: Mapping[str, object],
                      before_steps: Any = None, after_steps: Any = None) -> SummaryComparison:
    """The whole comparison as one JSON-ready dict (what the REST route and the CLI print).

    `before`, `after`: summaries (`Report.to_json()`) as their callers hold them, read field by
    field (a field that is missing or of another type counts as absent)."""
    sa, src_a = _step_samples(before, before_steps)
    sb, src_b = _step_samples(after, after_steps)
    na, nb = _profiled_steps(before), _profiled_steps(after)
    label_a, label_b = side_labels(_part(before.get("source")), _part(after.get("source")))
    side_a, side_b = _side(before, sa, src_a, label_a), _side(after, sb, src_b, label_b)
    fa = {f["id"] for f in side_a["findings"] if f["id"] is not None}
    fb = {f["id"] for f in side_b["findings"] if f["id"] is not None}
    steps = step_change(sa, sb, conditions=(before.get("conditions"), after.get("conditions")))
    caveats = shared_handicaps(before.get("conditions"), after.get("conditions"))
    return {
        "before": side_a,
        "after": side_b,
        "steps": steps,
        "prediction": _prediction_check([f for f in side_a["findings"]
                                         if f["id"] is not None and f["id"] not in fb], steps),
        "ops": table_deltas(_rows(before.get("ops")), _rows(after.get("ops")),
                            "name", "cuda_total_us", per_before=na, per_after=nb, scale=1e-3),
        "kernel_kinds": table_deltas(_rows(before.get("kernel_kinds")),
                                     _rows(after.get("kernel_kinds")), "kind", "total_us",
                                     per_before=na, per_after=nb, scale=1e-3),
        "delta_unit": "ms_per_step",
        "headline": headline(steps, caveats),
        "caveats": caveats,
        "findings": {"resolved": sorted(fa - fb), "new": sorted(fb - fa),
                     "remaining": sorted(fa & fb)},
    }


def _prediction_check(resolved: list[FindingBrief], steps: StepChangeMeta) -> PredictionCheck:
    """The resolved findings' predictions and the gain measured (a gain: the step got shorter;
    the interval of the change turned into one of the gain)."""
    pct, low, high = steps.get("delta_pct"), steps.get("ci_low_pct"), steps.get("ci_high_pct")
    return {"resolved": resolved, "measured_gain_pct": -pct if pct is not None else None,
            "ci_low_gain_pct": -high if high is not None else None,
            "ci_high_gain_pct": -low if low is not None else None,
            "verdict": steps.get("verdict", "insufficient data")}

