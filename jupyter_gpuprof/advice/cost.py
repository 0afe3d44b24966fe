"""What the step's time is worth: GPU-hours per 1,000 steps, and money at a GPU-hour price.

The price comes from the caller (a config value) or `$JUPYTER_GPUPROF_GPU_HOUR_PRICE`; without
one, only GPU-hours are shown. Savings are the findings' predicted ones (what-if replay) or a
try's measured one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import NotRequired, TypedDict, cast

from .. import units
from ..analysis.summary import Analysis
from ..store.meta_blocks import PhaseConditionsMeta, StackMeta, TryMeta
from .findings import FindingJson
from .try_remedies import with_remedies
from .verdict import Advice

PRICE_ENV = "JUPYTER_GPUPROF_GPU_HOUR_PRICE"
STEPS = 1000  # the unit a training run's cost is quoted in
MS_PER_HOUR = 3.6e6


class Worth(TypedDict):
    """GPU-hours (and money, when a GPU-hour price is set) of 1,000 steps of some duration."""

    gpu_hours_per_1k_steps: float
    money_per_1k_steps: float | None


class Saving(Worth):
    """What one finding's predicted fix saves per 1,000 steps."""

    id: str
    category: str


class CostBlock(TypedDict):
    """The summary's `cost`: the step and its idle share per 1,000 steps, and each saving."""

    price_per_gpu_hour: float | None
    n_gpus: int
    step: Worth
    idle: Worth
    savings: list[Saving]
    headline: NotRequired[str | None]  # what the idle share costs, in one sentence


class WhatIfBlocks(TypedDict):
    """The summary's additive blocks; conditions and tries as the run meta holds them."""

    cost: CostBlock | None
    conditions: PhaseConditionsMeta | None
    conditions_by_phase: dict[str, PhaseConditionsMeta] | None
    tries: list[TryMeta] | None
    stack: StackMeta | None


def gpu_hour_price(configured: float | None = None) -> float | None:
    """Price of one GPU-hour: the configured value, else the environment's, else None."""
    if configured is not None:
        return float(configured) if configured > 0 else None
    raw = os.environ.get(PRICE_ENV, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"${PRICE_ENV}={raw!r} is not a number: set it to the price of one "
                         f"GPU-hour, e.g. 2.50") from None
    return value if value > 0 else None


def gpu_hours(step_ms: float, n_gpus: int = 1, steps: int = STEPS) -> float:
    """GPU-hours that `steps` steps of `step_ms` take on `n_gpus` GPUs."""
    return step_ms * steps * max(n_gpus, 1) / MS_PER_HOUR


def cost_block(step_ms: float, idle_ms: float, findings: Sequence[FindingJson],
               n_gpus: int = 1, price: float | None = None) -> CostBlock:
    """The summary's `cost` block: the step, its idle share and each finding's saving."""
    def worth(ms: float) -> Worth:
        h = gpu_hours(ms, n_gpus)
        return {"gpu_hours_per_1k_steps": h, "money_per_1k_steps": h * price if price else None}

    saved: list[Saving] = []
    for f in findings:
        pred = f.get("predicted_step_ms")
        if isinstance(pred, (int, float)) and step_ms > 0:
            saved.append({"id": f["id"], "category": f["category"],
                          **worth(max(0.0, step_ms - pred))})
    return {"price_per_gpu_hour": price, "n_gpus": max(n_gpus, 1), "step": worth(step_ms),
            "idle": worth(max(0.0, idle_ms)), "savings": saved}


def headline(cost: CostBlock | None) -> str | None:
    """One sentence for the report's top: what the GPU's idle share costs."""
    if not cost or not cost["step"]["gpu_hours_per_1k_steps"]:
        return None
    step, idle = cost["step"], cost["idle"]
    share = 100 * idle["gpu_hours_per_1k_steps"] / step["gpu_hours_per_1k_steps"]
    text = (f"Every 1,000 steps take {step['gpu_hours_per_1k_steps']:.3g} GPU-hours; the GPU "
            f"idles {units.pct(share)} of them ({idle['gpu_hours_per_1k_steps']:.3g} GPU-hours")
    if cost.get("price_per_gpu_hour"):
        text += (f", {idle['money_per_1k_steps']:.3g} at {cost['price_per_gpu_hour']:.2f} "
                 f"per GPU-hour")
    return text + ")."


def whatif_blocks(a: Analysis, advice: Advice, meta: object = None,
                  price: float | None = None) -> WhatIfBlocks:
    """The summary's additive blocks: `cost`, `conditions` (from the run meta) and `tries`.

    `a` is the Analysis, `advice` the Advice and `meta` the run's RunMeta (or None).
    """
    conditions = getattr(meta, "conditions", None) or {}
    findings = [f.to_json() for f in advice.findings]
    n_gpus = a.info.world_size or 1
    cost = (cost_block(a.real.step_ms, a.real.idle_ms, findings, n_gpus, gpu_hour_price(price))
            if a.gpu_available else None)
    if cost is not None:
        cost["headline"] = headline(cost)
    return {"cost": cost,
            "conditions": conditions.get("baseline") or None,
            "conditions_by_phase": conditions or None,
            "tries": with_remedies(getattr(meta, "tries", None)),
            "stack": _stack_with_remedies(getattr(meta, "stack", None))}


def _stack_with_remedies(stack: StackMeta | None) -> StackMeta | None:
    """The run's stack, each step that crashed with its cause and remedy where known."""
    if not stack:
        return None
    return cast(StackMeta, {**stack, "steps": with_remedies(stack.get("steps")) or []})
