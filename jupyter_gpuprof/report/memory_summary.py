"""A run's saved allocator history -> the summary's memory-over-the-step and OOM blocks."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import cast

import msgspec
import numpy as np

from ..advice import memory_fixes as fixes
from ..analysis.autocast_dtypes import autocast_replay
from ..analysis.memory_attribution import KINDS, LASTING, KnownAddresses
from ..analysis.memory_history import MemoryHistory, MemoryHistoryError, read_snapshot, replay
from ..analysis.memory_oom import oom_post_mortem
from ..analysis.memory_step import memory_step
from ..analysis.recompute_time import ForwardKernels, StepKernels
from ..store.layout import MEMORY_HISTORY_KEY, run_memory_history
from ..store.memory_snapshot import CaptureAdditions
from .model import Timeline
from .model_memory import (
    HeavyModule,
    MemoryFix,
    MemoryHolder,
    MemoryKind,
    MemoryOverStep,
    MemoryPhase,
    OomAllocation,
    OomPostMortem,
)

#: what views print for each kind (`analysis.memory_attribution.KINDS`)
KIND_LABELS = {
    "parameters": "parameters",
    "gradients": "gradients",
    "optimizer_state": "optimizer state",
    "saved_activations": "activations saved for backward",
    "temporaries": "temporaries",
    "before_recording": "model state (unnamed)",
}


def forward_kernels(timeline: Timeline | None, gpu_bound: bool = True) -> ForwardKernels | None:
    """The inline steps' kernels launched in `forward` ranges, in launch order (what
    checkpointing's recompute is priced from); None without the steps' GPU events. A kernel
    whose launch the trace did not record (queued before it started: the previous step's
    backward) is no step's forward."""
    if timeline is None or "forward" not in timeline.phases:
        return None
    fwd = timeline.phases.index("forward")
    gpu = {i for i, lane in enumerate(timeline.lanes) if lane.kind == "gpu"}
    steps: list[StepKernels] = []
    for s in timeline.detail:
        if s is None or not isinstance(s.launch_us, list) or not isinstance(s.op, list):
            continue
        rows = [i for i, (lane, ph, at) in enumerate(zip(s.lane, s.phase, s.launch_us,
                                                         strict=True))
                if ph == fwd and lane in gpu and at >= 0]
        if not rows:
            continue
        rows.sort(key=lambda i: (s.launch_us[i], s.start_us[i]))  # type: ignore[index]
        names = timeline.strings
        steps.append(StepKernels(
            keys=[f"{names[s.op[i]] if s.op[i] >= 0 else ''}|{names[s.name[i]]}"
                  for i in rows],
            dur_us=np.array([s.dur_us[i] for i in rows], dtype=float),
            launch_us=np.array([s.launch_us[i] for i in rows], dtype=float)))
    if not steps:
        return None
    return ForwardKernels(steps, timeline.profiled_scale or 1.0, gpu_bound)


def history_file(path: str | Path | None) -> Path | None:
    """The run folder's saved allocator history (a job's: the lowest rank's), when there is one."""
    if path is None or not Path(path).is_dir():
        return None
    name = run_memory_history(os.listdir(path))
    found = Path(path) / name if name else None
    return found if found is not None and found.is_file() and not found.is_symlink() else None


def _known(ours: CaptureAdditions) -> KnownAddresses | None:
    raw = ours.get("addresses")
    if not isinstance(raw, dict):
        return None
    known = {k: [(int(p), int(b)) for p, b in v] for k, v in raw.items() if isinstance(v, list)}
    return known if any(known.values()) else None


def _lane_phases(history: MemoryHistory, series_us: list[int]) -> list[MemoryPhase]:
    """The forward / backward / optimizer ranges that overlap the series, clipped to it."""
    if not series_us:
        return []
    lo, hi = series_us[0], series_us[-1]
    return [MemoryPhase(name=p.name, start_us=max(p.start_us, lo), end_us=min(p.end_us, hi))
            for p in history.phases if p.name in LASTING and p.end_us >= lo and p.start_us <= hi]


def _fixes(found: list[fixes.MemoryFix]) -> list[MemoryFix]:
    return [MemoryFix(**asdict(f)) for f in found]


def memory_blocks(
    path: str | Path | None, gpu_total_bytes: int | None = None, error: str | None = None,
    forward: ForwardKernels | None = None,
) -> tuple[MemoryOverStep | None, OomPostMortem | None, str | None]:
    """The memory-over-step block, the OOM post-mortem and a one-line warning (any may be None)."""
    file = history_file(path)
    if file is None:
        return None, None, None
    try:
        snapshot = read_snapshot(file)
        history = replay(snapshot)
    except MemoryHistoryError as e:
        return None, None, f"memory history not read: {e}"
    except (KeyError, TypeError, ValueError) as e:  # a snapshot of another shape
        return None, None, f"memory history not read: {file.name}: {type(e).__name__}: {e}"
    raw = snapshot.get(MEMORY_HISTORY_KEY)
    ours = cast("CaptureAdditions", raw if isinstance(raw, dict) else {})
    oom_info = ours.get("oom") if isinstance(ours.get("oom"), dict) else None
    pm = oom_post_mortem(history, (oom_info or {}).get("error") or error or "")
    oom = None
    if pm is not None:
        f = pm.fragmentation
        oom = OomPostMortem(
            requested_bytes=pm.requested_bytes,
            allocated_bytes=pm.allocated_bytes,
            limit_bytes=pm.limit_bytes or gpu_total_bytes,
            step_bytes=pm.step_bytes,
            state_bytes=pm.state_bytes,
            top=[OomAllocation(**asdict(a)) for a in pm.top],
            reserved_bytes=f.reserved_bytes,
            largest_free_bytes=f.largest_free_bytes,
            fits_in_free_block=pm.fits_in_free_block,
            error=pm.error,
            fixes=_fixes(fixes.oom_fixes(pm)),
        )
    if not history.n_events:
        return None, oom, None
    step = memory_step(history, _known(ours))
    elem = ours.get("param_element_size")
    elem_bytes = elem if isinstance(elem, int) else None
    # a step that ran out of memory never reached its peak: the post-mortem's fixes stand for
    # it, and fixes priced on the part that ran (a split of that part) would contradict them
    priced = [] if pm is not None else fixes.memory_fixes(
        step, forward=forward, activation_dtype_bytes=elem_bytes,
        autocast=autocast_replay(ours.get("graph")))
    frag, heavy = step.fragmentation, step.heavy
    over = MemoryOverStep(
        peak_bytes=step.peak_bytes,
        peak_us=step.peak_us,
        peak_phase=step.peak_phase,
        kinds=[
            MemoryKind(
                kind=k,
                label=KIND_LABELS[k],
                bytes_at_peak=step.by_kind[k],
                high_bytes=step.kind_high[k],
            )
            for k in KINDS
        ],
        lines=[MemoryHolder(**asdict(h)) for h in step.lines],
        modules=[MemoryHolder(**asdict(h)) for h in step.modules],
        heavy=HeavyModule(**asdict(heavy)) if heavy else None,
        reserved_bytes=frag.reserved_bytes,
        slack_bytes=frag.slack_bytes,
        largest_free_bytes=frag.largest_free_bytes,
        expandable_segments=frag.expandable,
        fixes=_fixes(priced),
        headroom_x=None if pm is not None else fixes.headroom(step, gpu_total_bytes),
        known_addresses=step.known_addresses,
        events=step.events,
        series_us=step.series_us,
        series_bytes=step.series_bytes,
        phases=_lane_phases(history, step.series_us),
    )
    return over, oom, None


def memory_only_text(path: str | Path | None, error: str | None = None) -> str | None:
    """The memory lines of a run that has no trace (an out-of-memory error in a warm-up step)."""
    from ..views.memory_text import oom_lines, over_step_lines

    over, oom, problem = memory_blocks(path, None, error)
    if problem:
        return f"gpuprof: {problem}"
    docs = msgspec.to_builtins({"oom": oom, "over_step": over})
    lines = oom_lines(docs["oom"]) + over_step_lines(docs["over_step"])
    return "\n".join(lines).strip() or None
