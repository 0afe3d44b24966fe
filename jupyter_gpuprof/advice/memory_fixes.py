"""The fixes for memory, priced: the bytes each frees at the peak and the time it costs, as data.

Every price comes from the step's memory breakdown (`analysis.memory_step.MemoryStep`):
activations (saved for backward, and the step's temporaries) scale with the batch; parameters,
gradients and optimizer state do not. A time cost the recording cannot price is None, with
the reason in `time_note`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.autocast_dtypes import AutocastReplay
from ..analysis.memory_oom import OomPostMortem
from ..analysis.memory_step import MemoryStep
from ..analysis.recompute_time import ForwardKernels, recompute_cost
from .thresholds import OOM_STEP_GROWTH, SLACK_SHARE

#: bytes per element of fp32, and of the bf16 that autocast keeps saved activations in
FP32_BYTES, BF16_BYTES = 4, 2
#: the `--try` fix (advice/fix_table.py) that measures each memory fix, by the fix's id: the
#: offer is the finding's data (`MemoryFix.try_fix`), the measurement is `--try`'s
TRY_OF = {"checkpointing": "checkpoint", "autocast": "amp"}
#: micro-batch splits tried, smallest first (gradient accumulation over k micro-batches)
MICRO_BATCH_SPLITS = (2, 4, 8, 16)

CHECKPOINT = """\
from torch.utils.checkpoint import checkpoint
# in the parent's forward, at {call}: each layer recomputed in backward, not kept
hidden = checkpoint(layer, hidden, use_reentrant=False)
# Hugging Face models: model.gradient_checkpointing_enable()"""
AUTOCAST = """\
with torch.autocast("cuda", dtype=torch.bfloat16):   # bf16 activations saved for backward
    loss = loss_fn(model(x), y)                      # backward() outside, as before"""
MICRO_BATCH = """\
k = {k}                                    # micro-batches per optimizer step
for i, chunk in enumerate(batch.chunk(k)):
    loss = loss_fn(model(chunk.x), chunk.y) / k
    loss.backward()                        # gradients accumulate
opt.step(); opt.zero_grad(set_to_none=True)"""
EXPANDABLE = """\
import os   # before the first CUDA allocation (first cell / before `import torch` in a script)
os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True\""""
SET_TO_NONE = """\
opt.zero_grad(set_to_none=True)   # frees the gradients between steps instead of zeroing them"""


@dataclass
class MemoryFix:
    """One fix: what it is, the bytes it frees at the peak, its time cost per step, the code,
    and the `--try` fix that measures it where one can (None: only by editing the code)."""

    id: str
    title: str
    saves_bytes: int
    time_ms: float | None  # added per step (negative: faster); None: not priced
    time_note: str
    code: str
    try_fix: str | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.try_fix = TRY_OF.get(self.id)


def activation_bytes(step: MemoryStep) -> int:
    """Bytes at the peak that scale with the batch: saved activations and temporaries."""
    return step.by_kind["saved_activations"] + step.by_kind["temporaries"]


def headroom(step: MemoryStep, gpu_bytes: int | None) -> float | None:
    """How many times the batch could grow before the peak reaches the GPU's memory."""
    act = activation_bytes(step)
    if not gpu_bytes or act <= 0:
        return None
    fixed = step.peak_bytes - act
    return max((gpu_bytes - fixed) / act, 0.0)


def _checkpointing(step: MemoryStep, forward: ForwardKernels | None) -> MemoryFix | None:
    heavy = step.heavy
    if heavy is None or heavy.saved_bytes <= 0:
        return None
    if step.checkpointed_peak_bytes is not None:
        # replayed: each layer keeps its input only, until the backward reaches it
        saves = step.peak_bytes - step.checkpointed_peak_bytes
    else:  # no layer split: all but one layer's saved activations freed
        saves = int(heavy.saved_bytes * (1 - 1 / heavy.calls))
    total = step.kind_high["saved_activations"]
    share = heavy.saved_bytes / total if total else 1.0
    cost = recompute_cost(forward, heavy.calls, step.layer_ops, share)
    time_ms = cost.ms if cost is not None else None
    note = cost.note if cost is not None else "not priced: no forward kernels in the trace"
    return MemoryFix(
        "checkpointing",
        f"activation checkpointing of the {heavy.calls} layers called at {heavy.call}",
        saves,
        time_ms,
        note,
        CHECKPOINT.format(call=heavy.call),
    )


def _autocast(
    step: MemoryStep, activation_dtype_bytes: int | None, replay: AutocastReplay | None
) -> MemoryFix | None:
    saved = step.by_kind["saved_activations"]
    if activation_dtype_bytes != FP32_BYTES or saved <= 0:
        return None
    if replay is not None and replay.low_precision:
        return None  # autocast (or bf16) already runs
    if replay is not None and replay.saved_bytes > 0:
        # the step's graph replayed under autocast's op lists, the weights' bf16 copies included;
        # a peak before the backward holds only part of the saved tensors
        saves = replay.saved_bytes - replay.autocast_bytes
        if step.peak_phase != "backward":
            saves = int(saves * min(saved / replay.saved_bytes, 1.0))
        how = "the step's saved tensors replayed under autocast"
        if step.autocast_held_bytes:
            # outputs the loop holds through the backward, and their gradients at the peak
            saves += step.autocast_held_bytes
            how += ", with the outputs the loop holds and their gradients"
    else:
        saves = int(saved * (1 - BF16_BYTES / FP32_BYTES))
        how = "at most: half the saved activations (no graph recorded)"
    if saves <= 0:
        return None
    return MemoryFix(
        "autocast",
        "bf16 activations (autocast)",
        saves,
        None,
        f"not priced here: bf16 matmuls are faster; the precision finding prices them ({how})",
        AUTOCAST,
    )


def _split(scaling: float, need: float | None, cost: str) -> MemoryFix | None:
    """The fewest micro-batches that free `need` of the `scaling` bytes (those that shrink
    with the batch: 1 - 1/k of them go); None when no split frees enough."""
    k = next((k for k in MICRO_BATCH_SPLITS if need is None or scaling * (1 - 1 / k) >= need),
             None)
    if k is None:
        return None
    return MemoryFix("micro_batches", f"{k} micro-batches with gradient accumulation",
                     int(scaling * (1 - 1 / k)), None, cost, MICRO_BATCH.format(k=k))


def _micro_batches(step: MemoryStep, need_bytes: int | None) -> MemoryFix | None:
    act = activation_bytes(step)
    if act <= 0:
        return None
    return _split(act, need_bytes,
                  "not priced: the same work in smaller kernels (a little slower per sample)")


def _expandable(step: MemoryStep) -> MemoryFix | None:
    # what it frees is the reserved bytes less what the replayed expandable segment reserves
    # (its holes stay mapped), not all the slack above the peak
    frag = step.fragmentation
    after = step.expandable_reserved_bytes
    slack = frag.reserved_bytes - (after if after is not None else step.peak_bytes)
    if frag.expandable or slack < SLACK_SHARE * max(step.peak_bytes, 1):
        return None
    return MemoryFix(
        "expandable_segments",
        "expandable segments (PYTORCH_CUDA_ALLOC_CONF)",
        slack,
        0.0,
        "none measurable: segments grow in place",
        EXPANDABLE,
    )


def _set_to_none(step: MemoryStep) -> MemoryFix | None:
    # gradients a step of its own allocated are held with set_to_none too (accumulation)
    kept = step.gradients_kept_bytes if step.peak_phase != "optimizer" else 0
    if kept <= 0 or not step.known_addresses:
        return None
    return MemoryFix(
        "set_to_none",
        "gradients freed between steps (zero_grad(set_to_none=True))",
        kept,
        0.0,
        "none: the zeroing kernel is skipped",
        SET_TO_NONE,
    )


def memory_fixes(
    step: MemoryStep,
    *,
    forward: ForwardKernels | None = None,
    activation_dtype_bytes: int | None = None,
    autocast: AutocastReplay | None = None,
) -> list[MemoryFix]:
    """The priced fixes for a step's peak, largest saving first."""
    fixes = [
        _checkpointing(step, forward),
        _autocast(step, activation_dtype_bytes, autocast),
        _micro_batches(step, None),
        _expandable(step),
        _set_to_none(step),
    ]
    return sorted((f for f in fixes if f is not None), key=lambda f: -f.saves_bytes)


def oom_growth(pm: OomPostMortem) -> float:
    """How many times what the failed step held it would have needed at its peak: the rest of
    its layers (the layers it ran priced per layer) times the growth after the forward."""
    lp = pm.layers
    if lp is None or not lp.total or lp.done <= 0 or lp.begun > lp.total:
        return OOM_STEP_GROWTH
    return OOM_STEP_GROWTH * max(lp.total / lp.done, 1.0)


def oom_fixes(pm: OomPostMortem) -> list[MemoryFix]:
    """The fixes that would have let the failed step fit, each with the memory it frees."""
    out: list[MemoryFix] = []
    if pm.limit_bytes is None:
        return out
    whole = oom_growth(pm) * (pm.step_bytes + pm.requested_bytes)
    over = int(pm.state_bytes + whole - pm.limit_bytes)
    if (split := _split(whole, over, "not priced: the same work in smaller kernels")) is not None:
        out.append(split)
    frag = pm.fragmentation
    if not frag.expandable and frag.slack_bytes >= pm.requested_bytes and not pm.fits_in_free_block:
        out.append(
            MemoryFix(
                "expandable_segments",
                "expandable segments (PYTORCH_CUDA_ALLOC_CONF)",
                frag.slack_bytes,
                0.0,
                "none measurable: segments grow in place",
                EXPANDABLE,
            )
        )
    return out
