"""Stacking the measured fixes: which fix to keep first, which to try on top, when to revert.

Each fix is first measured alone against the control (advice/tries.py). Here the best one
that measured a significant gain, with its first losses within `LOSS_TOLERANCE` of the
original's, is kept; every other fix that ran is then tried on top of the fixes kept so far,
judged against that stack (the same statistics, paired rounds where the notebook measured
them), and kept only when it is significantly faster there and the losses still hold; else it
is reverted and the reason said. Fixes of one family replace each other (`compile` and
`graphs` both compile the model): the better one alone stands for the family. The stack ends
with the step time of all kept fixes together against the control and one block of code that
applies them, written for the loop that ran. Deciding is here; tries/stacking.py measures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .. import units
from ..analysis.compare import step_change
from ..store.meta_blocks import StackMeta, TrainingMeta, TryMeta
from .fix_table import BY_NAME, stack_name
from .loop_terms import ALREADY_COMPILED, mark_line
from .thresholds import STACK_LOSS_TOLERANCE
from .tries import judge_tries

#: how far a kept fix may move the first losses (relative; advice/thresholds.py)
LOSS_TOLERANCE = STACK_LOSS_TOLERANCE


@dataclass
class StackPlan:
    """The fix kept first, the fixes to try on top of it in order, and those left out (why)."""

    base: TryMeta | None
    candidates: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "graphs: crashed alone", ...
    why_none: str | None = None  # why nothing is stacked


def _gain(t: Mapping[str, object]) -> float | None:
    g = t.get("measured_gain_pct")
    return float(g) if isinstance(g, (int, float)) and not isinstance(g, bool) else None


def loss_problem(t: Mapping[str, object], tolerance: float = LOSS_TOLERANCE) -> str | None:
    """Why a try's first losses rule it out of a stack (moved beyond `tolerance`), or None."""
    rel = t.get("loss_rel_diff")
    if isinstance(rel, (int, float)) and rel > tolerance:
        return (f"its first losses moved {units.pct(100 * rel, 2)} from the original's "
                f"(tolerance {units.pct(100 * tolerance)})")
    return None


def _faster(t: Mapping[str, object]) -> bool:
    """A try that measured a significant gain."""
    ch = t.get("change")
    gain = _gain(t)
    return (isinstance(ch, Mapping) and bool(ch.get("significant")) and gain is not None
            and gain > 0)


def plan(tries: Sequence[TryMeta]) -> StackPlan:
    """What to stack, from the fixes measured alone (judged: best first)."""
    ranked = sorted((t for t in tries if t["fix"] in BY_NAME),
                    key=lambda t: -(g if (g := _gain(t)) is not None else -1e9))
    skipped: list[str] = []
    base = None
    for t in ranked:
        if _faster(t) and (why := loss_problem(t)) is None:
            base = t
            break
        if _faster(t) and why:
            skipped.append(f"{t['fix']}: {why}")
    if base is None:
        return StackPlan(None, [], skipped, "no fix measured a significant gain alone with its "
                                            "losses held: nothing to keep")
    families = {BY_NAME[base["fix"]].family}
    candidates: list[str] = []
    for t in ranked:
        fix = t["fix"]
        if t is base or any(s.startswith(f"{fix}:") for s in skipped):
            continue
        family = BY_NAME[fix].family
        if t.get("error"):
            skipped.append(f"{fix}: crashed alone")
        elif family in families:
            skipped.append(f"{fix}: replaces {_family_member(family, base, candidates)}, "
                           "which measured faster alone")
        elif (why := loss_problem(t)) is not None:
            skipped.append(f"{fix}: {why} alone")
        else:
            families.add(family)
            candidates.append(fix)
    return StackPlan(base, candidates, skipped)


def _family_member(family: str, base: TryMeta, candidates: list[str]) -> str:
    """The fix of `family` already chosen (the base or a candidate)."""
    return next((f for f in [base["fix"], *candidates] if BY_NAME[f].family == family),
                base["fix"])


def judge_added(reference: TryMeta, candidate: TryMeta, kept: Sequence[str],
                added: str) -> TryMeta:
    """The stack with `added` on top of `kept`, judged against the stack without it, and the
    decision: kept when significantly faster there with its losses held, else reverted."""
    judged = judge_tries([candidate], list(reference.get("step_ms") or []),
                         reference.get("conditions"), [], reference)[0]
    judged.update({"reference": stack_name(list(kept)), "added": added,
                   "stacked_on": list(kept)})
    judged.pop("predicted_gain_pct", None)
    on_top = f"on top of {stack_name(list(kept))}"
    if judged.get("error"):
        judged.update({"kept": False, "why": f"reverted: crashed {on_top}"})
        return judged
    gain = _gain(judged) or 0.0
    moved = f"{units.pct(abs(gain), 1)} {'faster' if gain >= 0 else 'slower'} {on_top}"
    if (why := loss_problem(judged)) is not None:
        judged.update({"kept": False, "why": f"reverted: {why}"})
    elif _faster(judged):
        judged.update({"kept": True, "why": f"kept: {moved}"})
    else:
        ch: Mapping[str, object] = judged.get("change") or {}
        verdict = ch.get("verdict", "not judged")
        judged.update({"kept": False, "why": f"reverted: {moved} ({verdict}), not a "
                                             "significant gain"})
    return judged


def stack_code(kept: Sequence[str], training: TrainingMeta | None) -> str:
    """One block of code that applies every kept fix, each as the user writes it by hand,
    written for the loop that ran (its compile call, where it marks iterations)."""
    training = training or {}
    compiled = bool(dict(training).get("compiled_graphs"))
    mark = mark_line(training)
    blocks = []
    for i, fix in enumerate(kept, 1):
        code = BY_NAME[fix].code
        if fix == "graphs":
            if compiled:
                code = f"{ALREADY_COMPILED}\n{code}   # in place of your torch.compile(model)"
            if mark is not None:
                code = f"{code}\n{mark}"
        blocks.append(f"# {i}. {fix}: {BY_NAME[fix].help}\n{code}")
    return "\n".join(blocks)


def stack_block(control: TryMeta | None, stack_plan: StackPlan, steps: Sequence[TryMeta],
                last: TryMeta | None, training: TrainingMeta | None) -> StackMeta:
    """The summary's `stack`: the fixes kept, each step tried on top, the step time of all kept
    fixes together (`last`: the latest measurement of the kept stack) against the control, and
    the code that applies them."""
    base = stack_plan.base
    kept = ([base["fix"]] if base else []) + [str(s["added"]) for s in steps if s.get("kept")]
    out: StackMeta = {"fixes": kept, "steps": list(steps), "skipped": list(stack_plan.skipped),
                      "loss_tolerance": LOSS_TOLERANCE, "why_none": stack_plan.why_none,
                      "code": stack_code(kept, training) if kept else None}
    final = last if last is not None and not last.get("error") else base
    control_ms = list(control.get("step_ms") or []) if control else []
    final_ms = list(final.get("step_ms") or []) if final else []
    if final is not None and control_ms and final_ms:
        ch = step_change(control_ms, final_ms, conditions=(
            control.get("conditions") if control else None, final.get("conditions")))
        before, after = ch.get("median_before_ms"), ch.get("median_after_ms")
        out.update({"median_ms": after, "control_median_ms": before, "change": ch,
                    "gain_pct": 100.0 * (1 - after / before) if before and after is not None
                    else None})
    return out
