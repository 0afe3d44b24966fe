"""What one step of a run is, and how the capture found it: every report and the magic say it.

A reader comparing the step time with their own log must know what was timed: one optimizer
step, one iteration of a GAN's two optimizers, one LBFGS step with its closure evaluations, one
backward() of a loop that updates parameters by hand, one re-run of the cell, or one
`jupyter_gpuprof.step()` interval. Gradient accumulation is named only when it is one: one
optimizer, several backward calls before its step.
"""

from __future__ import annotations

from typing import TypedDict

from . import units


class StepCounts(TypedDict, total=False):
    """The capture's counts that say what a step is (meta.json's `training` holds them)."""

    manual: bool  # steps marked by jupyter_gpuprof.step()
    steps_by: str | None  # optimizer.step() | backward(), None before a step is seen
    micro_batches_per_step: float | None
    optimizers_per_step: float | None
    closure_evaluations_per_step: float | None


def step_definition(training: StepCounts | None, mode: str | None) -> str | None:
    """One sentence on what a step is, from the capture's `training` counts; None without one."""
    t = training or {}
    if mode == "body":
        return "a step is one run of the profiled cell"
    if t.get("manual"):
        return "a step is the interval between two jupyter_gpuprof.step() calls"
    by = t.get("steps_by")
    if by == "backward()":
        return ("a step is one backward() call: the loop calls no optimizer.step() (it updates "
                "the parameters itself)")
    if by != "optimizer.step()":
        return None
    micro = t.get("micro_batches_per_step") or 0
    optimizers = t.get("optimizers_per_step") or 1
    closures = t.get("closure_evaluations_per_step") or 0
    if optimizers > 1:
        return (f"a step is one iteration of {units.num(optimizers)} optimizers "
                f"({units.num(micro)} backward() calls), found from optimizer.step()")
    if closures > 0:
        return (f"a step is one optimizer.step() that evaluates its closure "
                f"{units.num(closures)} times (LBFGS-style)")
    if micro > 1:
        return (f"a step is one optimizer step of {units.num(micro)} micro-batches "
                "(gradient accumulation), found from optimizer.step()")
    return "a step is one optimizer.step(), found from its hook"
