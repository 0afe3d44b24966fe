"""Judge the fixes `--try` measured: change against the control, beside the predicted gain.

The measurement (tries/notebook.py) hands raw step times; here each try gets the same
statistics as `compare` (median change, 95 % bootstrap interval, Mann-Whitney, `unreliable`
when the GPU ran under other conditions), its gain next to the what-if prediction of the
finding it fixes, and the tries are ranked by measured gain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import cast

from .. import units
from ..analysis.compare import step_change
from ..categories import summary as verdict_summary
from ..store.meta_blocks import PhaseConditionsMeta, TryMemoryMeta, TryMeta
from .findings import Finding, FindingJson, Verdict
from .fix_table import BY_NAME, CATEGORY_OF, tries_measuring
from .try_remedies import remedy_for

#: the control of a script's tries: the command re-run without a fix (`run --try`)
CONTROL = "none"


def _gain(value: object) -> float | None:
    """A gain as JSON holds it (None when missing or not a number)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _rounds(control: TryMeta | None, t: TryMeta) -> tuple[list[float], list[float]] | None:
    """The control's and the try's round medians, paired, when both were measured in rounds."""
    if control is None or not control.get("round_ms") or not t.get("round_ms"):
        return None
    return control["round_ms"], t["round_ms"]


def memory_offers(memory: object) -> dict[str, int]:
    """The `--try` fixes the memory over the step offers, each with the bytes its memory fix
    predicts it frees (`memory`: the summary's `memory` block, as JSON)."""
    over = memory.get("over_step") if isinstance(memory, Mapping) else None
    fixes = over.get("fixes") if isinstance(over, Mapping) else None
    return {str(f["try_fix"]): int(f["saves_bytes"]) for f in fixes or []
            if isinstance(f, Mapping) and f.get("try_fix")}


def _peak(t: TryMeta | None) -> int | None:
    peak = t.get("peak_memory_bytes") if t else None
    return peak if isinstance(peak, int) and not isinstance(peak, bool) else None


def _memory(t: TryMeta, control: TryMeta | None,
            offers: Mapping[str, int]) -> TryMemoryMeta | None:
    """A memory fix's try (one the memory over the step offers, or a fix that measures no
    verdict finding): its peak against the control's, beside the predicted saving."""
    fix = str(t["fix"])
    if fix not in offers and (fix not in BY_NAME or BY_NAME[fix].category is not None):
        return None
    peak, before = _peak(t), _peak(control)
    predicted = offers.get(fix)
    gain = _gain(t.get("measured_gain_pct"))
    return {"peak_bytes": peak, "control_peak_bytes": before,
            "change_bytes": peak - before if peak is not None and before is not None else None,
            "predicted_change_bytes": -predicted if predicted is not None else None,
            "step_time_change_pct": -gain if gain is not None else None}


def judge_tries(raw: Sequence[TryMeta], baseline_ms: list[float],
                baseline_conditions: PhaseConditionsMeta | None,
                findings: Sequence[Mapping[str, object]],
                control: TryMeta | None = None,
                offers: Mapping[str, int] | None = None) -> list[TryMeta]:
    """Each try with `change`, `measured_gain_pct` and `predicted_gain_pct`; best first. With a
    `control` (the script re-run unchanged, in a process like the tries'), each try is
    measured against it, pair to pair: the run's own baseline ran with the capture installed
    and at another time, so a difference from it can be the rerun's, not the fix's; where
    both were measured in interleaved rounds (the notebook's), the rounds must agree too.

    A memory fix's try also gets `memory`: its peak against the control's and the saving
    predicted (`offers`: `memory_offers` of the summary).

    `raw` and `control`: the tries as tries/ wrote them; `findings`: the summary's."""
    measures = _measures(findings)
    predicted = {f.get("category"): f.get("expected_gain_pct") for f in findings}
    paired = bool(control and not control.get("error") and control.get("step_ms"))
    reference: object = baseline_ms
    conditions: object = baseline_conditions
    if paired:
        assert control is not None
        reference, conditions = control["step_ms"], control.get("conditions")
    out = []
    for raw_try in raw:
        t = cast(TryMeta, dict(raw_try))
        t["predicted_gain_pct"] = _gain(predicted.get(_category_measured(t, measures)))
        if paired:
            t["reference"] = CONTROL
        if not t.get("error") and t.get("step_ms"):
            ch = step_change(reference, t["step_ms"],
                             conditions=(conditions, t.get("conditions")),
                             rounds=_rounds(control if paired else None, t))
            t["change"] = ch
            before, after = ch["median_before_ms"], ch["median_after_ms"]
            t["measured_gain_pct"] = (100.0 * (1 - after / before)
                                      if before and after is not None else None)
        if not t.get("error") and (memory := _memory(t, control if paired else None,
                                                      offers or {})) is not None:
            t["memory"] = memory
        out.append(t)
    return sorted(out, key=lambda t: -(t.get("measured_gain_pct") or -1e9))


def _measures(findings: Sequence[Finding] | Sequence[Mapping[str, object]]
              ) -> dict[str, tuple[str, ...]]:
    """Each finding's category and the tries that measure it (`fix_table.tries_measuring`):
    a try of another route of its fix (compiling, where the finding's step is captured by
    hand) measures something else."""
    out = {}
    for f in findings:
        if isinstance(f, Finding):
            out[f.category] = tries_measuring(f.category, f.data.get("try_fixes"))
        else:
            out[str(f.get("category"))] = tries_measuring(f.get("category"), f.get("try_fixes"))
    return out


def _category_measured(t: TryMeta, measures: Mapping[str, tuple[str, ...]] | None) -> str | None:
    """The category of the finding a try measures: its fix's, where that finding's tries (when
    known) include it."""
    cat = CATEGORY_OF.get(str(t["fix"]))
    if cat is None or (measures is not None and cat in measures
                       and str(t["fix"]) not in measures[cat]):
        return None
    return cat


def measured_gains(tries: Sequence[TryMeta],
                   measures: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, float]:
    """Each category's best gain a significant try measured (`tries`: as meta.json holds them;
    `measures`: `_measures` of the findings, where known)."""
    best: dict[str, float] = {}
    for t in tries:
        cat = _category_measured(t, measures)
        ch = t.get("change")
        gain = _gain(t.get("measured_gain_pct"))
        if cat and isinstance(ch, Mapping) and ch.get("significant") and gain is not None:
            best[cat] = max(best.get(cat, -1e9), gain)
    return best


def crashed(tries: Sequence[TryMeta],
            measures: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, str]:
    """Each category whose every try failed, with the first failure's cause: its fix did not run
    where it was tried, so its prediction is not something to act on first."""
    failed: dict[str, str] = {}
    ran: set[str] = set()
    for t in tries:
        cat = _category_measured(t, measures)
        if cat is None:
            continue  # a memory fix: it measures no verdict finding
        if t.get("error"):
            known = remedy_for(str(t["error"]))
            failed.setdefault(cat, f"--try {t['fix']} crashed: {t['error']}"
                              + (f" (remedy: {known.remedy})" if known else ""))
        else:
            ran.add(cat)
    return {cat: why for cat, why in failed.items() if cat not in ran}


def rerank(findings: list[Finding], tries: Sequence[TryMeta]) -> list[Finding]:
    """Findings with their measured gain, ranked by it where a significant try measured one
    (by the expected gain otherwise); a finding whose fix crashed wherever it was tried ranks
    below every measured one (its prediction still competes with the untried ones')."""
    measures = _measures(findings)
    best, broken = measured_gains(tries, measures), crashed(tries, measures)
    ranked = [dataclasses.replace(f, measured_gain_pct=best.get(f.category)) for f in findings]
    floor = min(best.values(), default=None)

    def gain(f: Finding) -> float:
        if f.measured_gain_pct is not None:
            return f.measured_gain_pct
        value = f.expected_gain_pct or 0.0
        if f.category in broken and floor is not None:
            return min(value, floor - 1e-9)
        return value

    return sorted(ranked, key=lambda f: -gain(f))


def rerank_findings(findings: Sequence[Mapping[str, object]],
                    tries: Sequence[TryMeta]) -> list[FindingJson]:
    """Findings (as JSON: the summary's) re-ranked by measured gain where a significant try
    measured one."""
    best = measured_gains(tries, _measures(findings))
    ranked = [cast(FindingJson, {**f, "measured_gain_pct": best.get(str(f.get("category")))})
              for f in findings]
    return sorted(ranked, key=lambda f: -(f["measured_gain_pct"] if f["measured_gain_pct"]
                                          is not None else f.get("expected_gain_pct") or 0))


def _measured_words(f: Finding) -> str:
    """What a try measured for the finding, beside its prediction on the same basis: a try
    compares median steps, so a finding priced on the wall time (its stalls included) shows
    its median-step prediction too (DCGAN: 41 % measured per median step, where ≈71 % of
    the wall time is predicted and ≈12 % of the median step)."""
    assert f.measured_gain_pct is not None
    if f.step_gain_pct is None:
        return (f"its fix measured {units.pct(f.measured_gain_pct)} faster (predicted "
                f"≈{units.pct(f.expected_gain_pct)})")
    return (f"its fix measured {units.pct(f.measured_gain_pct)} faster per median step "
            f"(predicted ≈{units.pct(f.step_gain_pct)} of the median step, "
            f"≈{units.pct(f.expected_gain_pct)} of the wall time)")


def verdict_after_tries(verdict: Verdict, ranked: Sequence[Finding],
                        tries: Sequence[TryMeta] = ()) -> Verdict:
    """The verdict once tries have measured: it names the finding ranked first, so a fix whose
    try measured a real gain leads over a prediction, and one that measured slower does not.

    A verdict with no priced finding of its own (a straggler, comm, one-time work) stands."""
    if not ranked or verdict.category not in {f.category for f in ranked}:
        return verdict
    top = ranked[0]
    mine = next(f for f in ranked if f.category == verdict.category)
    broken = crashed(tries, _measures(ranked))
    measured = _measured_words(top) if top.measured_gain_pct is not None else None
    if top.category == verdict.category:
        if measured is None:
            if (why := broken.get(top.category)) is None:
                return verdict
            return dataclasses.replace(
                verdict, reasons=[*verdict.reasons, f"{why}; the prediction is untested"])
        return dataclasses.replace(verdict,
                                   summary=f"{verdict_summary(top.category)}: {measured}.")
    gain = measured or f"fixing it should save ≈{units.pct(top.expected_gain_pct)}"
    moved = (f"its fix measured {units.pct(abs(mine.measured_gain_pct))} "
             f"{'slower' if mine.measured_gain_pct < 0 else 'faster'}"
             if mine.measured_gain_pct is not None
             else broken.get(verdict.category, "its fix was not measured"))
    note = f"{verdict.category} was predicted ≈{units.pct(mine.expected_gain_pct)}; {moved}"
    # the predicted ranking's comparisons ("launch is worth 68% vs …") no longer hold
    kept = [r for r in verdict.reasons if not r.startswith(f"{verdict.category} is worth ")]
    return Verdict(top.category, f"{verdict_summary(top.category)}: {gain}.", verdict.confidence,
                   [*kept, note])
