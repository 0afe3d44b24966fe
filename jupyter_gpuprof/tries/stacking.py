"""Stack the measured fixes: each one tried on top of the fixes kept so far, then all together.

advice/stacking.py decides (the fix kept first, the order, keep or revert); here the stack is
measured, in the live kernel as the cell's tries are (the kept stack and the stack with one
more fix, in interleaved rounds from the same restored state: the kernel is put back after
each) or, for a script, by running the command once more per step of the stack with every
fix of it switched on at start-up (compared with the kept stack's own run). The result is
kept in the run's meta and summary as `stack`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ..advice.fix_table import stack_name
from ..advice.stacking import StackPlan, judge_added, plan, stack_block
from ..store.meta_blocks import StackMeta, TrainingMeta, TryMeta

if TYPE_CHECKING:
    from ..store import Run
    from .notebook import Applier

#: measures the stack `kept` (its reference) and `kept` + one more fix: (reference, stacked)
Measure = Callable[[list[str], str], tuple[TryMeta, TryMeta]]


def stack_fixes(judged: Sequence[TryMeta], control: TryMeta | None, measure: Measure,
                training: TrainingMeta | None = None,
                say: Callable[[str], None] | None = None) -> StackMeta | None:
    """The stack over the fixes measured alone (`judged`, as advice.tries judged them); None
    where fewer than two fixes ran (nothing to stack)."""
    if sum(1 for t in judged if not t.get("error")) < 2:
        return None
    stack_plan: StackPlan = plan(judged)
    steps: list[TryMeta] = []
    last: TryMeta | None = stack_plan.base
    if stack_plan.base is not None:
        kept = [stack_plan.base["fix"]]
        for added in stack_plan.candidates:
            if say is not None:
                say(f"stack: {added} on top of {stack_name(kept)}")
            reference, stacked = measure(list(kept), added)
            step = judge_added(reference, stacked, kept, added)
            steps.append(step)
            if say is not None:
                say(f"stack: {stack_name([*kept, added])}: {step.get('why')}")
            if step.get("kept"):
                kept.append(added)
                last = stacked
            elif not reference.get("error"):
                last = reference  # the latest measurement of the stack kept so far
            if step.get("error") and "interrupted" in str(step.get("error")):
                break
    return stack_block(control, stack_plan, steps, last, training)


def in_kernel(step: Callable[[], object], ns: dict[str, object], warmup: int, steps: int,
              progress: Callable[[str], None] | None = None,
              apply: Applier | None = None) -> Measure:
    """Measure a stack step in the live kernel: the kept stack and the stack with one more fix,
    interleaved, from the same restored state (tries/notebook.py `run_tries`, each stack
    applied by `apply`: the fixes' appliers, nested)."""
    from .notebook import applied, run_tries

    def measure(kept: list[str], added: str) -> tuple[TryMeta, TryMeta]:
        reference, stacked = run_tries(step, ns, [stack_name(kept), stack_name([*kept, added])],
                                       warmup=warmup, steps=steps, control=False,
                                       apply=apply or applied, progress=progress).tries
        return reference, stacked

    return measure


def record_stack(run: Run, summary: Mapping[str, object], stack: StackMeta | None
                 ) -> dict[str, object]:
    """Keep the stack in the run's meta and cached summary; the summary with it."""
    run.meta.stack = stack
    run.write_meta()
    out = {**summary, "stack": stack}
    run.write_summary(out)
    return out
