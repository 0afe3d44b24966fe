"""Turn the rules' findings into a ranked list and one verdict with its confidence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from .. import units
from ..analysis.kernels import MATMUL_KINDS
from ..analysis.summary import Analysis
from ..analysis.trace_formats import without_gpu_activity
from ..categories import ABOUT, label
from . import thresholds as T
from .findings import Finding, FindingJson, Verdict, VerdictJson
from .one_time_rule import excluded_note
from .rules import RULES
from .whatif import predictions_for

HOST_SIDE = ("input", "transfer", "sync", "launch", "host")
#: each category's verdict opening (categories.py), which its summary line continues
SUMMARIES = {c.value: about.summary for c, about in ABOUT.items()}


#: the compute verdict's words for a step with nothing big to fix
NOTHING_BIG = ": nothing big to fix; a faster step needs less work (model/batch) or better kernels."


def verdict_label(category: str | None) -> str:
    """The reader's name of a verdict category ("memory" reads "memory bandwidth")."""
    return label(category)


class AdviceJson(TypedDict):
    """An `Advice` as JSON (`Advice.to_json`)."""

    verdict: VerdictJson
    findings: list[FindingJson]


@dataclass
class Advice:
    """Verdict plus findings, most valuable first."""

    verdict: Verdict
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> AdviceJson:
        """JSON-ready dict."""
        return {"verdict": self.verdict.to_json(),
                "findings": [f.to_json() for f in self.findings]}


def _tensor_core_share(a: Analysis) -> float:
    mm = a.kinds[a.kinds["kind"].isin(MATMUL_KINDS)]
    total = float(mm["total_us"].sum())
    return float(mm.loc[mm["tensor_core"].astype(bool), "total_us"].sum()) / total if total else 0.0


def confidence_of(a: Analysis, top: Finding | None, second: Finding | None,
                  category: str) -> tuple[str, list[str]]:
    """How sure a verdict is (high/medium/low) and why; shared with the cross-rank advice."""
    reasons: list[str] = []
    doubts = 0
    if a.real.source == "baseline":
        reasons.append(f"reconciled with an unprofiled baseline of {a.baseline['n']} steps "
                       f"(median {units.ms(a.real.step_ms)}, GPU busy "
                       f"{units.ms(a.real.gpu_busy_ms)} of it)")
        if a.loader is not None and a.loader.settled:
            reasons.append(f"the baseline began {a.loader.settled} untimed steps after the "
                           "capture's set-up, once the batches its DataLoader workers made "
                           "ready meanwhile were taken (they would read faster than the loop)")
    else:
        doubts += 1
        reasons.append("no unprofiled baseline: judged on the profiled timeline, which "
                       "inflates host-side costs")
    if a.real.source == "baseline" and a.real.inflation > T.INFLATION_WARN:
        reasons.append(f"the profiler slowed the step {a.real.inflation:.1f}× "
                       f"({units.ms(a.real.profiled_step_ms)} profiled); trace idle time was "
                       f"rescaled ×{a.real.idle_scale:.2f} to real time")
        if category in HOST_SIDE:
            doubts += 1
    if top and second:
        margin = top.expected_gain_pct / max(second.expected_gain_pct, 1e-9)
        reasons.append(f"{top.category} is worth {units.pct(top.expected_gain_pct)} vs "
                       f"{units.pct(second.expected_gain_pct)} for the runner-up "
                       f"({second.category})")
        if margin < T.CONFIDENT_MARGIN:
            doubts += 1
    if a.n_steps < T.MIN_CONFIDENT_STEPS:
        doubts += 2
        reasons.append(f"only {a.n_steps} profiled step(s)")
    if a.info.n_events_dropped:
        # judged on what was left after invalid events were dropped: the rest may be skewed
        doubts += 1
        reasons.append(f"{a.info.n_events_dropped:,} invalid event(s) of the trace dropped")
    return ("high", "medium", "low")[min(doubts, 2)], reasons


def root_cause_first(found: list[Finding]) -> list[Finding]:
    """Findings by gain, except that a fix priced together with the one it needs first (a CUDA
    graph after the syncs are gone) leads only if it adds a real gain of its own on top of
    that one (the fusion a compile also brings is the memory finding's kind, not its own)."""
    if not found or not (need := found[0].data.get("requires")):
        return found
    first = next((f for f in found if f.category == need), None)
    own = found[0].expected_gain_pct - found[0].data.get("fusion_gain_pct", 0.0)
    if first is None or own - first.expected_gain_pct >= T.PREREQUISITE_MARGIN_PCT:
        return found
    return [first, *(f for f in found if f is not first)]


def _basis(a: Analysis) -> str:
    """What the verdict's gain is a share of: the step, or the wall time where stalls make a
    step cost more than its median."""
    if a.wall_ms == a.real.step_ms:
        return f"the {units.ms(a.real.step_ms)} step"
    return (f"the wall time ({units.ms(a.wall_ms)} a step over the long run, "
            f"{units.ms(a.real.step_ms)} median)")


def advise(a: Analysis) -> Advice:
    """Findings from every rule, ranked by expected gain, and the verdict."""
    if not a.gpu_available:
        return Advice(Verdict(None, without_gpu_activity(a.info.held), "low",
                              ["no GPU activity recorded"]))
    priced = (f for f in (rule(a) for rule in RULES.values()) if f is not None)
    found = root_cause_first(sorted(priced, key=lambda f: f.expected_gain_pct, reverse=True))
    top = found[0] if found else None
    second = found[1] if len(found) > 1 else None
    gpu_ms = a.real.gpu_busy_ms * max(a.n_steps, 1)
    kernels = int(a.kinds["calls"].sum()) if len(a.kinds) else 0
    if (gpu_ms < T.MIN_GPU_WORK_MS and kernels < T.MIN_GPU_ACTIVITIES
            and not (top and top.category == "one-time")):
        return Advice(Verdict(None, f"Too little GPU work to judge: {kernels} GPU activities, "
                              f"{units.ms(gpu_ms)} of GPU time in a "
                              f"{units.ms(a.window.dur_us / 1e3)} window; profile more "
                              "steps of the real workload.", "low",
                              [f"fewer than {T.MIN_GPU_ACTIVITIES} GPU activities and "
                               f"{units.ms(T.MIN_GPU_WORK_MS)} of GPU time"]), found)
    if a.window.host_ranges:  # the GPU work missing from the trace reads as idle time
        return Advice(Verdict(None, "Cannot judge a sampled or filtered trace: most GPU rows "
                              "have no launch in it, so its idle time is work the trace left "
                              "out; profile the real workload.", "low",
                              a.window.notes()), found)
    why: str | None = None  # a reason the compute verdict's words need
    if top and top.expected_gain_pct >= T.MIN_VERDICT_GAIN_PCT:
        category = top.category
        summary = (f"{SUMMARIES[category]}: fixing it should save "
                   f"≈{units.pct(top.expected_gain_pct)} of {_basis(a)}.")
        if category == "one-time":
            summary = (f"{SUMMARIES[category]}: ≈{units.pct(top.expected_gain_pct)} of the "
                       f"{units.ms(a.real.step_ms)} step; profile again after warm-up.")
    else:
        category = "compute"
        words, why = (_idle_words(a, found) if a.real.busy_frac < T.COMPUTE_BUSY_FRAC
                      else (NOTHING_BIG, None))
        tc = _tensor_core_share(a)
        mfu = a.flops.get("mfu_pct")
        summary = (f"The GPU is busy {units.pct(100 * a.real.busy_frac)} of the step, "
                   f"{units.pct(100 * tc)} of matmul time on Tensor Cores"
                   + (f", MFU {units.pct(mfu)}" if mfu else "")
                   + words)
    confidence, reasons = confidence_of(a, top, second, category)
    if why is not None:
        reasons.append(why)
    if (note := excluded_note(a)) is not None:
        reasons.append(note)
    unexplained = a.stall_ms("")
    if unexplained > 0 and unexplained >= T.UNEXPLAINED_STALL_PCT / 100 * a.wall_ms:
        reasons.append(f"{units.pct(100 * unexplained / a.wall_ms)} of the wall time is in "
                       "baseline stalls that nothing the capture records ran in (no new "
                       "epoch, save, GC pass or eval): profile one of those steps")
    return checked(Advice(Verdict(category, summary, confidence, reasons), found))


def _idle_words(a: Analysis, found: list[Finding]) -> tuple[str, str | None]:
    """Why a mostly idle GPU still gets no verdict, and a reason where the words need one: its
    idle time is spread over small causes, or its largest cause (`IDLE_CAUSE_NAMED_PCT` of the
    step or more) is big but the fix priced for it does not remove it; where that fix is
    priced at nothing its finding is not shown, so the reason keeps what the fix leaves."""
    causes = a.real.idle_by_cause_ms
    cause = max(causes, key=lambda k: causes[k], default=None)
    if cause is None or causes[cause] < T.IDLE_CAUSE_NAMED_PCT / 100 * a.real.step_ms:
        return f"{NOTHING_BIG} (GPU idle time is spread over small causes.)", None
    why = None
    if (shown := next((f for f in found if f.category == cause), None)) is not None:
        priced = (f"the fix priced for them saves {units.pct(shown.expected_gain_pct)} (the "
                  f"{cause} finding says what it leaves)")
    elif (fix := predictions_for(a).get(cause)) is not None:
        priced = "no fix priced here removes them (the reasons say what its fix leaves)"
        why = f"the {cause} fix as priced saves {units.pct(fix.gain_pct)}: {fix.driver}"
    else:
        priced = "no fix priced here removes them"
    return (f", idle {units.ms(causes[cause])} a step in {cause} gaps, but {priced}: no fix "
            "is worth a verdict."), why


def checked(advice: Advice) -> Advice:
    """The advice, with a reason added when its verdict is not its largest priced finding.

    A verdict that its own numbers contradict ("straggler, worth 12% vs 20% for launch") must
    at least say why it was chosen; every verdict path ends here.
    """
    v, found = advice.verdict, advice.findings
    if v.category is None or not found:
        return advice
    top = max(found, key=lambda f: f.expected_gain_pct)
    if v.category == top.category:
        return advice
    if top.data.get("requires") == v.category:
        note = (f"{v.category} first: {top.category} (≈{units.pct(top.expected_gain_pct)} with it) "
                f"needs the {v.category} fix and adds under {T.PREREQUISITE_MARGIN_PCT:.0f} "
                "points on top")
    elif v.category == "compute" and top.expected_gain_pct < T.MIN_VERDICT_GAIN_PCT:
        note = (f"no finding is worth {units.pct(T.MIN_VERDICT_GAIN_PCT)} of the step (largest: "
                f"{top.category}, {units.pct(top.expected_gain_pct)})")
    else:
        note = (f"not the largest priced finding: {top.category} is worth "
                f"{units.pct(top.expected_gain_pct)} of the step")
    return Advice(Verdict(v.category, v.summary, v.confidence, [*v.reasons, note]), found)
