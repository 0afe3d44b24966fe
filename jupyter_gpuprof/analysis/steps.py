"""Per-step times from the trace, and the profiled window the other analyses look at.

GPU work is assigned to the step whose CPU range *launched* it (via correlation ids), not to
the CPU range it happens to overlap: with a deep launch queue the GPU runs far behind the CPU.
That needs the launches: in a trace where most GPU rows have no launching runtime call (a
sampled or filtered trace, such as HolisticTraceAnalysis's test data), the lag between launch
and run cannot be read, so each step is its host range and GPU rows belong to the range they
run in (`Window.host_ranges`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .intervals import union
from .kineto_json import GPU_CATEGORIES
from .name_masks import names_where
from .one_time import one_time_table, steady_start
from .trace import Trace

STEP_NAME = re.compile(r"^ProfilerStep#(\d+)$")
STEP_PREFIX = "ProfilerStep#"  # what every step name contains
OPTIMIZER_STEP = "Optimizer.step#"
#: where the steps came from, in the order they are tried
STEP_SOURCES = ("ProfilerStep", "Optimizer.step", "gpu_user_annotation", "none")
#: columns of `step_table`
STEP_COLUMNS = {
    "step": "step number (ProfilerStep#N; -1 when the trace has no step markers)",
    "cpu_start_us": "host start of the step",
    "cpu_end_us": "host end of the step's range",
    "gpu_start_us": "first GPU activity launched by the step",
    "gpu_end_us": "last GPU activity launched by the step ends",
    "end_us": "step done on both sides: max(cpu_end_us, gpu_end_us)",
    "step_us": "step duration: end_us minus the previous step's end_us (first: minus cpu_start)",
    "gpu_busy_us": "union of the step's GPU activity (kernels, copies, memsets)",
    "kernel_us": "sum of kernel durations",
    "memcpy_us": "sum of memcpy + memset durations",
    "n_kernels": "kernels launched",
}
#: below this share of GPU rows with a known launch, steps are their host ranges
LAUNCHES_NEEDED = 0.5


@dataclass(frozen=True)
class Window:
    """The analysed time range [start_us, end_us] and the main host process."""

    start_us: float
    end_us: float
    pid: int
    step_source: str = "ProfilerStep"  # one of STEP_SOURCES
    host_ranges: bool = False  # steps are their host ranges: too few launches to follow

    @property
    def dur_us(self) -> float:
        """Length of the window."""
        return self.end_us - self.start_us

    def notes(self) -> list[str]:
        """What the report should say about how the steps were cut (its `warnings`)."""
        if not self.host_ranges:
            return []
        return [f"steps are their {self.step_source} host ranges: fewer than "
                f"{LAUNCHES_NEEDED:.0%} of the GPU rows have their launch in the trace (a "
                "sampled or filtered trace), so the GPU work a step launched cannot be followed"]


def optimizer_classes(trace: Trace) -> tuple[str, ...]:
    """The optimizer classes whose step() ran in the trace (torch names each step's range
    `Optimizer.step#<Class>.step`), in order of first appearance: the fix for the optimizer is
    written for the one the loop uses, and for none when the loop updates its parameters itself."""
    host = trace.of("user_annotation", "cpu_op", columns=["name", "ts_us"])
    steps = host[names_where(host, lambda n: n.startswith(OPTIMIZER_STEP),
                             OPTIMIZER_STEP)].sort_values("ts_us")
    return tuple(dict.fromkeys(str(n)[len(OPTIMIZER_STEP):].removesuffix(".step")
                               for n in steps["name"]))


#: the host ranges' columns a step marker keeps (the step table reads no other)
MARK_COLUMNS = ["cat", "name", "ts_us", "dur_us", "end_us", "pid", "tid"]


def step_markers(trace: Trace) -> tuple[pd.DataFrame, str]:
    """Host-side step ranges (one row per step, in order) and their source (`STEP_SOURCES`).

    ProfilerStep#N first; a trace without them (a profiler driven by hand) falls back to the
    optimizer's steps, then to a range the user annotated on the GPU that repeats.
    """
    host = trace.of("user_annotation", "cpu_op", columns=MARK_COLUMNS)
    ev = host[names_where(host, lambda n: STEP_NAME.match(n) is not None, STEP_PREFIX)]
    if len(ev):
        number = ev["name"].astype(str).str.extract(STEP_NAME, expand=False)
        marks = ev.assign(step=number.astype(int))
        return marks.drop_duplicates("step").sort_values("ts_us"), "ProfilerStep"
    opt = host[names_where(host, lambda n: n.startswith(OPTIMIZER_STEP), OPTIMIZER_STEP)]
    if len(opt):
        return _between_optimizer_steps(opt.drop_duplicates("ts_us").sort_values("ts_us")), \
            "Optimizer.step"
    ranges = trace.of("gpu_user_annotation")
    counts = ranges["name"].astype(str).value_counts()
    counts = counts[counts >= 2]
    if len(counts):
        name = counts.index[0]
        # the host range of the same name is where its GPU work was launched
        same = host[(host["name"].astype(str) == name).to_numpy()]
        marks = same if len(same) == counts.iloc[0] else ranges[
            (ranges["name"].astype(str) == name).to_numpy()]
        marks = marks.sort_values("ts_us")
        return marks.assign(step=np.arange(len(marks))), "gpu_user_annotation"
    return host.iloc[0:0].assign(step=np.zeros(0, dtype=np.int64)), "none"


def _between_optimizer_steps(opt: pd.DataFrame) -> pd.DataFrame:
    """One step per optimizer step: from the end of the previous one to the end of this one
    (the first reaches back one median period, not to the start of the trace)."""
    ends = opt["end_us"].to_numpy(dtype=np.float64)
    period = float(np.median(np.diff(ends))) if len(ends) > 1 else float(opt["dur_us"].iloc[0])
    first = max(float(ends[0]) - period, float(opt["ts_us"].iloc[0]) - period)
    starts = np.append(first, ends[:-1])
    return pd.DataFrame({"step": np.arange(len(ends)), "ts_us": starts, "end_us": ends,
                         "pid": opt["pid"].to_numpy()})


def gpu_activity(trace: Trace) -> pd.DataFrame:
    """GPU rows (kernels, copies, memsets) with the host launch time where it is known."""
    gpu = trace.of(*GPU_CATEGORIES)
    launches = trace.of("cuda_runtime", "cuda_driver")
    launches = launches[launches["correlation"] >= 0].drop_duplicates("correlation")
    lt = pd.Series(launches["ts_us"].to_numpy(), index=launches["correlation"].to_numpy())
    ltid = pd.Series(launches["tid"].to_numpy(), index=launches["correlation"].to_numpy())
    return gpu.assign(
        launch_us=gpu["correlation"].map(lt).to_numpy(dtype=np.float64, na_value=np.nan),
        launch_tid=gpu["correlation"].map(ltid).fillna(-1).astype(np.int64).to_numpy(),
    )


def launches_known(gpu: pd.DataFrame) -> bool:
    """Whether enough GPU rows have their launch in the trace to follow work to its step."""
    return bool(len(gpu)) and float(np.mean(~np.isnan(gpu["launch_us"].to_numpy()))) \
        >= LAUNCHES_NEEDED


def _assign(gpu: pd.DataFrame, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Index of the step that launched each GPU row (-1: outside every step)."""
    if not launches_known(gpu):  # each row belongs to the step (host range) it runs in
        i = np.searchsorted(starts, gpu["ts_us"].to_numpy(), side="right") - 1
        return np.where(i < len(starts) - 1, i, -1)
    t = np.where(np.isnan(gpu["launch_us"]), gpu["ts_us"], gpu["launch_us"])
    i = np.searchsorted(starts, t, side="right") - 1
    inside = (i >= 0) & (t <= ends[np.clip(i, 0, None)])
    # a GPU row with no known launch belongs to the step in which it runs
    unknown = np.isnan(gpu["launch_us"].to_numpy())
    nxt = np.append(starts[1:], np.inf)
    # rows running on the GPU before the first row with a known launch were queued before the
    # capture (a GPU-bound step runs a step behind the host: its whole previous step); rows
    # starting after the last one were launched once the host side had stopped recording
    gpu_t = gpu["ts_us"].to_numpy()
    known_t = gpu_t[~unknown]
    first_known = known_t.min() if len(known_t) else np.inf
    last_known = known_t.max() if len(known_t) else -np.inf
    carried = unknown & ((gpu_t < first_known) | (gpu_t > last_known))
    inside |= unknown & ~carried & (i >= 0) & (t < nxt[np.clip(i, 0, None)])
    inside &= ~carried
    return np.where(inside, i, -1)


def step_table(trace: Trace) -> tuple[pd.DataFrame, Window]:
    """Per-step times (columns in `STEP_COLUMNS`) and the profiled window."""
    marks, source = step_markers(trace)
    gpu = gpu_activity(trace)
    ev = trace.events
    if marks.empty:
        host = ev[~ev["cat"].isin(GPU_CATEGORIES)]
        lo = float(ev["ts_us"].min()) if len(ev) else 0.0
        # start-up, module loading, capture: not the steady state this window stands for
        lo = steady_start(one_time_table(trace), lo, gpu["ts_us"].to_numpy())
        hi = float(ev["end_us"].max()) if len(ev) else 0.0
        later = gpu[gpu["end_us"].to_numpy() > lo]
        if len(later):  # no steps: the GPU's span is the window (host-only edges are not it)
            lo, hi = max(lo, float(later["ts_us"].min())), float(later["end_us"].max())
        pid = int(host["pid"].mode().iloc[0]) if len(host) else -1
        marks = pd.DataFrame({"step": [-1], "ts_us": [lo], "end_us": [hi], "pid": [pid]})
    starts = marks["ts_us"].to_numpy(dtype=np.float64)
    ends = marks["end_us"].to_numpy(dtype=np.float64)
    ends = np.maximum(ends, starts)
    idx = _assign(gpu, np.append(starts, np.inf), np.append(ends, -np.inf))
    # a step is its host range when the launches cannot be followed (and never without steps)
    host_ranges = len(gpu) > 0 and not launches_known(gpu) and int(marks["step"].iloc[0]) >= 0
    rows = []
    prev_end = starts[0] if len(starts) else 0.0
    # each step's GPU rows as a slice of one stable sort (a mask over the table per step took
    # a third of a 52-step trace's step table)
    by_step = np.argsort(idx, kind="stable")
    cut = np.searchsorted(idx[by_step], np.arange(len(starts) + 1))
    g_ts_all, g_end_all = gpu["ts_us"].to_numpy(), gpu["end_us"].to_numpy()
    g_dur_all, kernel_all = gpu["dur_us"].to_numpy(), (gpu["cat"] == "kernel").to_numpy()
    for k, (step, s, e) in enumerate(zip(marks["step"], starts, ends, strict=True)):
        mine = by_step[cut[k]:cut[k + 1]]
        g_ts, g_ends = g_ts_all[mine], g_end_all[mine]
        if len(mine):
            us, ue = union(g_ts, g_ends)
            busy = float((ue - us).sum())
            g_start, g_end = float(pd.Series(g_ts).min()), float(pd.Series(g_ends).max())
        else:
            busy, g_start, g_end = 0.0, np.nan, np.nan
        end = max(e, g_end) if len(mine) and not host_ranges else e
        is_kernel = kernel_all[mine]
        g_dur = g_dur_all[mine]
        rows.append({
            "step": int(step), "cpu_start_us": s, "cpu_end_us": e,
            "gpu_start_us": g_start, "gpu_end_us": g_end, "end_us": end,
            "step_us": end - (prev_end if k and not host_ranges else s), "gpu_busy_us": busy,
            "kernel_us": float(g_dur[is_kernel].sum()),
            "memcpy_us": float(g_dur[~is_kernel].sum()),
            "n_kernels": int(is_kernel.sum()),
        })
        prev_end = end
    steps = pd.DataFrame(rows, columns=list(STEP_COLUMNS))
    pid = int(marks["pid"].iloc[0]) if "pid" in marks else -1
    if "cat" in marks and (marks["cat"] == "gpu_user_annotation").any():  # GPU pid: take the host's
        host = ev[~ev["cat"].isin((*GPU_CATEGORIES, "gpu_user_annotation"))]
        pid = int(host["pid"].mode().iloc[0]) if len(host) else -1
    # the window still holds the GPU work that ran after the last host range
    end = np.nanmax(steps[["end_us", "gpu_end_us"]].to_numpy()) if host_ranges \
        else steps["end_us"].max()
    window = Window(float(starts[0]), float(end), pid, source, host_ranges)
    return steps, window


def assign_steps(gpu: pd.DataFrame, steps: pd.DataFrame) -> np.ndarray:
    """Step number of each GPU row (-1 outside the profiled steps)."""
    starts = steps["cpu_start_us"].to_numpy(dtype=np.float64)
    ends = steps["cpu_end_us"].to_numpy(dtype=np.float64)
    idx = _assign(gpu, np.append(starts, np.inf), np.append(ends, -np.inf))
    numbers = np.append(steps["step"].to_numpy(), -1)
    return np.where(idx >= 0, numbers[np.clip(idx, 0, len(numbers) - 1)], -1)
