"""One rank's trace reduced to what the cross-rank analysis needs: its `RankSummary`.

The reduction runs where the trace was parsed (a worker process for big runs: `rank_loading`),
so only per-step figures, the rank's collective kernels in launch order and the union of its
compute cross the process boundary, never the event table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .hostwork import INPUT_NEEDLES, is_input_range
from .intervals import Coverage, union
from .kernels import kind_of
from .name_masks import names_where
from .steps import assign_steps, gpu_activity
from .summary import Analysis
from .timeline_ranks import RankLanes
from .trace import Trace

_OP = re.compile(r"nccl(?:Dev)?Kernel_([A-Za-z]+)")


def is_collective(name: str) -> bool:
    """Whether a GPU kernel is a NCCL collective (`ncclKernel_*` and `ncclDevKernel_*`)."""
    return kind_of(name) == "nccl"


def collective_op(name: str) -> str:
    """The collective a NCCL kernel runs, e.g. AllReduce ('' when the name says nothing)."""
    m = _OP.search(name)
    return m.group(1) if m else ""


@dataclass
class RankSummary:
    """What one rank's trace contributes to the cross-rank analysis (small and picklable)."""

    rank: int
    world_size: int | None
    path: str
    t0_us: float  # absolute time of the trace's first event (its events are relative to it)
    steps: pd.DataFrame  # RANK_STEP_COLUMNS (distributed.py) without rank, in µs: step, step_us…
    collectives: pd.DataFrame  # step (-1: not launched in a step), op, ts_us, dur_us, by time
    compute: Coverage  # union of non-collective GPU activity (trace-relative time)
    span_us: float = 0.0  # from the first event to the last one's end
    lanes: RankLanes | None = None  # its lane group of the run's timeline (timeline_ranks.py)
    # what a report states per rank, so that it need not keep every rank's `Analysis`:
    step_median_ms: float | None = None  # its profiled step median
    busy_pct: float = 0.0  # GPU busy share of its profiled window
    warnings: list[str] = field(default_factory=list)  # what its reader dropped, window notes


def summarize_rank(trace: Trace, a: Analysis, default_rank: int = 0) -> RankSummary:
    """Reduce one rank's parsed trace and analysis to its `RankSummary`."""
    gpu = gpu_activity(trace)
    if len(gpu):
        gpu = gpu[gpu["device"] == int(gpu["device"].mode().iloc[0])]
    coll = names_where(gpu, is_collective) & (gpu["cat"] == "kernel").to_numpy()
    steps = a.steps
    has_marks = bool(len(steps)) and int(steps["step"].iloc[0]) >= 0
    step_of = assign_steps(gpu, steps) if has_marks else np.full(len(gpu), -1)
    # per-step work is what the step launched: rows whose launch went unrecorded were queued
    # earlier (the GPU can run a whole step behind the host) and would land in the wrong step
    step_of = np.where(np.isnan(gpu["launch_us"].to_numpy()) & has_marks, -1, step_of)
    comp, comm = gpu[~coll], gpu[coll]
    compute = Coverage.of(comp["ts_us"].to_numpy(), comp["end_us"].to_numpy())
    busy = Coverage.of(gpu["ts_us"].to_numpy(), gpu["end_us"].to_numpy())
    ann = trace.of("user_annotation", "cpu_op", columns=["name", "ts_us", "end_us"])
    inp = ann[names_where(ann, is_input_range, INPUT_NEEDLES)]
    input_cov = Coverage.of(inp["ts_us"].to_numpy(), inp["end_us"].to_numpy())
    rows = []
    prev_end = float(steps["cpu_start_us"].iloc[0]) if len(steps) else 0.0
    for s, cs, ce, end in zip(steps["step"], steps["cpu_start_us"], steps["cpu_end_us"],
                              steps["end_us"], strict=True):
        mine = step_of == s if has_marks else np.ones(len(gpu), dtype=bool)
        c = gpu[mine & ~coll]
        n = gpu[mine & coll]
        cu = Coverage.of(c["ts_us"].to_numpy(), c["end_us"].to_numpy()).total
        ns, ne = union(n["ts_us"].to_numpy(), n["end_us"].to_numpy())
        comm_us = float((ne - ns).sum())
        hidden = float(compute.overlap(ns, ne).sum())
        span = float(end) - prev_end
        idle = span - float(busy.overlap(np.array([prev_end]), np.array([float(end)]))[0])
        rows.append({"step": int(s), "step_us": span, "compute_us": cu, "comm_us": comm_us,
                     "exposed_comm_us": comm_us - hidden, "idle_us": max(0.0, idle),
                     "input_us": float(input_cov.overlap(np.array([cs]), np.array([ce]))[0])})
        prev_end = float(end)
    # every collective kernel in time order, also those queued before the capture began:
    # ranks are lined up on the sequence, not on step numbers that queue depth can skew
    colls = pd.DataFrame({
        "step": step_of[coll], "op": [collective_op(str(x)) for x in comm["name"].to_numpy()],
        "ts_us": comm["ts_us"].to_numpy(), "dur_us": comm["dur_us"].to_numpy(),
    }).sort_values("ts_us", kind="stable")
    rank = trace.info.rank if trace.info.rank is not None else default_rank
    return RankSummary(rank, trace.info.world_size, trace.info.path, trace.info.t0_us,
                       pd.DataFrame(rows, columns=["step", "step_us", "compute_us", "comm_us",
                                                   "exposed_comm_us", "idle_us", "input_us"]),
                       colls.reset_index(drop=True), compute,
                       float(trace.events["end_us"].max()) if len(trace.events) else 0.0,
                       step_median_ms=a.profiled["median_ms"], busy_pct=float(a.busy_pct),
                       warnings=list(a.info.warnings) + a.window.notes())
