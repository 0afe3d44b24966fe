"""Advice as one ordered list of passes, the same for a trace, a run folder and a rank folder.

rules → verdict (`advise`) → across ranks (`merge_advice`) → framework terms → loop terms →
refinements (patterns, in-use advice pruned, the user's line) → measured (tries re-rank the
findings).
Each pass takes the advice so far and the run's context and returns the next advice; a pass
with nothing to do for this run hands the advice on unchanged. `finish` is the one entry point:
the report builds every run's advice through it, so no part of a report is finished elsewhere.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..analysis.distributed import Distributed
from ..analysis.summary import Analysis
from ..store.meta_blocks import CallSiteMeta, FrameworkMeta, TrainingMeta, TryMeta
from .distributed_rules import merge_advice
from .frameworks import in_framework_terms
from .loop_terms import in_loop_terms
from .patterns import refine
from .tries import rerank, verdict_after_tries
from .verdict import Advice, advise


@dataclass
class Context:
    """What a run's advice is built from: its analysis (rank 0's for a job), the ranks' and the
    cross-rank tables when it has several, and what the capture recorded (meta.json)."""

    analysis: Analysis
    ranks: Sequence[Analysis] = ()
    distributed: Distributed | None = None
    # meta.json's blocks as the store read them (capture's keys): each pass checks what it reads
    framework: FrameworkMeta | None = None
    training: TrainingMeta | None = None
    callsites: Sequence[CallSiteMeta] = field(default_factory=list)
    tries: Sequence[TryMeta] = field(default_factory=list)


Pass = Callable[[Advice, Context], Advice]


def across_ranks(advice: Advice, ctx: Context) -> Advice:
    """Cross-rank findings (straggler, exposed communication) and the verdict over all ranks."""
    if ctx.distributed is None:
        return advice
    return merge_advice(advice, ctx.analysis, ctx.distributed, ctx.ranks)


def framework_terms(advice: Advice, ctx: Context) -> Advice:
    """Fixes in the Trainer's own terms; graph, compile and accumulation caveats."""
    return in_framework_terms(advice, ctx.framework, ctx.training)


def loop_terms(advice: Advice, ctx: Context) -> Advice:
    """Compile and CUDA-graph fixes for the loop that ran: compiled already, accumulating
    gradients, or stepping several optimizers an iteration."""
    return Advice(advice.verdict, in_loop_terms(advice.findings, ctx.training))


def refinements(advice: Advice, ctx: Context) -> Advice:
    """Known patterns (per-parameter `.item()`), in-use advice pruned, the user's line."""
    found = [dataclasses.replace(f, where=where)
             for f, where in refine(advice.findings, ctx.analysis, ctx.callsites)]
    return Advice(advice.verdict, found)


def measured(advice: Advice, ctx: Context) -> Advice:
    """Findings re-ranked by what their tries measured, where a significant try measured it,
    and the verdict after them: measured beats predicted."""
    if not ctx.tries:
        return advice
    ranked = rerank(advice.findings, ctx.tries)
    return Advice(verdict_after_tries(advice.verdict, ranked, ctx.tries), ranked)


#: the passes, in order (rules and the verdict come first, from `advise`)
PASSES: tuple[Pass, ...] = (across_ranks, framework_terms, loop_terms, refinements, measured)


def finish(ctx: Context) -> Advice:
    """A run's advice: the rules and the verdict, then every pass in order."""
    advice = advise(ctx.analysis)
    for step in PASSES:
        advice = step(advice, ctx)
    return advice
