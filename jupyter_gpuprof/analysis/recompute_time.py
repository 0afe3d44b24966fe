"""What activation checkpointing's recompute costs a step: the time of the kernels it re-runs.

Non-reentrant checkpointing (`torch.utils.checkpoint`, `use_reentrant=False`) re-runs each
checkpointed layer's forward once in the backward, and stops early (its default): once the
layer's last tensor saved for backward is recomputed. The rest of the model (embedding, final
norm, head, loss) is not re-run, and a layer's own ops after the one that allocated its last
saved tensor are not either (a Llama layer's down projection and residual add: the projection
saves its input before it runs; a GPT-2 layer's residual add). The cost is the GPU time of the
kernels re-run, not the forward's time scaled by the layers' share of saved bytes (a GEMM's time
is not proportional to the bytes it saves).

- **The layers' kernels** (`layer_run`): the trace's kernels launched in the step's forward hold
  one run of `calls` repeats of the same kernel sequence (one per layer call, the count the
  allocator history gives); that run's kernels are the layers'.
- **The ops not re-run** (`layer_ops`): from the allocator history, each layer's blocks from its
  last saved block (the last but its output) to its output, counted where the Python stack
  changes (a dropout's output and mask come from one call): one op each, taken as one kernel
  at the end of the layer's sequence. The layer's blocks counted the same way bound its
  kernels from below (a run of shorter repeats is not the layers').
- **Every forward of the step** (`layer_calls`): each place the layer's kernel sequence runs
  (a step of 4 micro-batches runs, and recomputes, its layers 4 times).
- **The price** (`recompute_cost`): a GPU-bound step pays those kernels' GPU time; a step whose
  GPU is busy less than `GPU_BOUND_BUSY_FRAC` of it, the longer of that and the host's time
  launching them (profiled, scaled to real time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import memory_attribution as attr
from .memory_history import MemoryHistory
from .memory_whatif import split_layers

#: what a GPU-time price leaves out (ResNet-50 on the H200: +9.0 ms of GPU, +22.6 ms a step)
GPU_ONLY = ("; GPU time: the step may pay host time too, the checkpoint's hooks and the "
            "recompute's launches (--try checkpoint measures it)")


@dataclass
class StepKernels:
    """One profiled step's forward kernels in launch order: a key each (launching op and kernel
    name), its GPU time and its host launch time (µs)."""

    keys: list[str]
    dur_us: np.ndarray
    launch_us: np.ndarray


@dataclass
class ForwardKernels:
    """The profiled steps' forward kernels and what turns their times into a real step's."""

    steps: list[StepKernels]
    host_scale: float  # the profiled step over the real one: the profiler slows the host
    gpu_bound: bool  # GPU busy at least GPU_BOUND_BUSY_FRAC of the real step


@dataclass
class RecomputeCost:
    """Checkpointing's time per step and how it was priced (the fix's `time_note`)."""

    ms: float
    note: str


@dataclass
class LayerOps:
    """A checkpointed layer's ops, from the allocator history (medians over the layers)."""

    ops: int  # ops that allocate in the layer: each launches a kernel at least
    tail: int  # ops after the one that allocated its last saved block: not re-run


def _stack_runs(history: MemoryHistory, blocks: pd.DataFrame) -> int:
    """How many runs of one Python stack the blocks make in allocation order (one call each)."""
    stacks = [history.frames[i] if i >= 0 else [] for i in blocks["frame_i"]]
    return 1 + sum(a != b for a, b in zip(stacks, stacks[1:], strict=False)) if stacks else 0


def layer_ops(history: MemoryHistory, kinds: pd.Series, call: str) -> LayerOps | None:
    """The ops a checkpointed layer allocates from, and those after its last saved block (its
    output aside); None without layers."""
    b = history.blocks.sort_values("alloc_i")
    saved = b[kinds[b.index] == "saved_activations"]
    ops: list[int] = []
    tails: list[int] = []
    for p in history.phases:
        if p.name != attr.FORWARD:
            continue
        mine = saved[(saved["alloc_us"] >= p.start_us) & (saved["alloc_us"] <= p.end_us)]
        for blocks in split_layers(history, mine, call).blocks:
            if len(blocks) < 2:
                continue
            first, last, out = (int(blocks["alloc_i"].iloc[k]) for k in (0, -2, -1))
            at = b["alloc_i"]
            ops.append(_stack_runs(history, b[(at >= first) & (at <= out)]))
            tails.append(_stack_runs(history, b[(at >= last) & (at <= out)]) - 1)
    if not ops:
        return None
    return LayerOps(int(np.median(ops)), int(np.median(tails)))


def layer_run(keys: list[str], calls: int, min_period: int = 1) -> tuple[int, int] | None:
    """(start, period) of `calls` back-to-back repeats of one kernel sequence, the longest
    period first, its earliest start (a final norm like a layer's first kernels extends the run
    at its end); None when the kernels hold no such run of `min_period` kernels or more (a
    layer launches at least one kernel per op it allocates from)."""
    if calls < 2 or len(keys) < calls:
        return None
    codes = np.unique(np.asarray(keys, dtype=object), return_inverse=True)[1]
    n = len(codes)
    for period in range(n // calls, max(min_period, 1) - 1, -1):
        need = (calls - 1) * period
        same = codes[:-period] == codes[period:]  # kernel i is kernel i + period's
        c = np.concatenate(([0], np.cumsum(same)))
        ok = np.flatnonzero(c[need:] - c[:-need] == need)
        if len(ok):
            return int(ok[0]), period
    return None


def layer_calls(keys: list[str], start: int, period: int) -> np.ndarray:
    """Where the layer's kernel sequence (`period` kernels from `start`) runs in the step, each
    start once, not overlapping: every forward of the step (micro-batches under gradient
    accumulation each run the layers, and each recomputes them)."""
    codes = np.unique(np.asarray(keys, dtype=object), return_inverse=True)[1]
    n = len(codes)
    match = np.ones(n - period + 1, dtype=bool)
    for j in range(period):
        match &= codes[j:n - period + 1 + j] == codes[start + j]
    out: list[int] = []
    for i in np.flatnonzero(match):
        if not out or i >= out[-1] + period:
            out.append(int(i))
    return np.asarray(out, dtype="int64")


def _one_step(s: StepKernels, calls: int, ops: LayerOps, scale: float
              ) -> tuple[float, float, int] | None:
    """(GPU ms, real host ms, layer calls) of the kernels the recompute re-runs in one step."""
    run = layer_run(s.keys, calls, ops.ops)
    if run is None:
        return None
    start, period = run
    kept = period - min(ops.tail, period - 1)
    firsts = layer_calls(s.keys, start, period)
    idx = (firsts[:, None] + np.arange(kept)[None, :]).ravel()
    ends = np.minimum(firsts + kept, len(s.keys) - 1)  # the first kernel not re-run
    host = float((s.launch_us[ends] - s.launch_us[firsts]).sum())
    return float(s.dur_us[idx].sum()) / 1e3, host / 1e3 / scale, len(firsts)


def recompute_cost(fwd: ForwardKernels | None, calls: int, ops: LayerOps | None,
                   share: float) -> RecomputeCost | None:
    """Checkpointing's time per step: the re-run kernels' GPU time (or, host-bound, their
    launch time), the mean over the profiled steps; without a run of layer kernels, the
    forward's GPU time × the layers' `share` of saved activations (None: no forward kernels)."""
    if fwd is None or not fwd.steps:
        return None
    scale = fwd.host_scale if fwd.host_scale > 0 else 1.0
    ops = ops or LayerOps(1, 0)
    found = [r for s in fwd.steps if (r := _one_step(s, calls, ops, scale)) is not None]
    if not found:
        gpu = float(np.mean([s.dur_us.sum() for s in fwd.steps])) / 1e3
        if gpu <= 0:
            return None
        return RecomputeCost(gpu * share, (
            "one extra forward of those layers: the forward's GPU time × their share of saved "
            f"activations ({share:.0%}; the trace's forward kernels repeat no sequence "
            f"{calls} times)" + GPU_ONLY))
    gpu = float(np.mean([g for g, _, _ in found]))
    host = float(np.mean([h for _, h, _ in found]))
    forwards = max(round(max(k for _, _, k in found) / calls), 1)
    each = f" in each of the step's {forwards} forwards" if forwards > 1 else ""
    skipped = (f" up to each layer's last saved tensor (its last {ops.tail} op(s) not re-run: "
               "early stop)" if ops.tail else "")
    what = (f"the GPU time of the {calls} layers' forward kernels{each}, re-run in the backward"
            f"{skipped}; the embedding, head and loss are not re-run")
    if fwd.gpu_bound or host <= gpu:
        return RecomputeCost(gpu, what + GPU_ONLY)
    return RecomputeCost(host, f"{what}: the host's time launching them, longer on this "
                               f"host-bound step ({gpu:.1f} ms of GPU time)")
