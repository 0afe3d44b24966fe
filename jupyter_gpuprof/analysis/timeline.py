"""A bounded, level-of-detail timeline of the profiled window, so views never need the trace.

A 300 MB trace holds millions of events; a browser can draw a few thousand rectangles. Each
lane (CPU ranges, CPU threads, sync calls, GPU streams) gets a share of `MAX_RECTS`; a lane with
more events than its share is binned by start time and every bin becomes one rectangle that
spans its events, counts them and is labelled by its longest one; a rectangle never spans a
shipped gap or the lane's longest idle stretches. Gaps keep their causes; only the `MAX_GAPS`
longest are shipped. Lanes are named by what runs there (main thread, autograd thread, stream
7 compute), another thread "CPU thread N" with the trace's own name for it, never its raw id.
Zoomed views draw real events from per-step tables (analysis/timeline_detail.py); counter
tracks (GPU memory allocated) come from analysis/timeline_counters.py. The result is plain
JSON (columnar lists, string tables).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import numpy as np
import pandas as pd

from .allocator import give_back_freed
from .hostwork import INPUT_NEEDLES, SYNC_APIS, is_input_range
from .kineto_json import GPU_CATEGORIES
from .name_masks import names_matching, names_where
from .steps import STEP_NAME, STEP_PREFIX, Window
from .timeline_counters import CounterTrack, counter_tracks
from .timeline_detail import StepEvents
from .trace import Trace

#: most rectangles shipped over all lanes (gaps and step marks not counted)
MAX_RECTS = 4000
#: most GPU-idle gaps shipped (the longest ones)
MAX_GAPS = 400
#: most CPU thread lanes (the busiest threads of the main process)
MAX_CPU_THREADS = 3
#: most GPU stream lanes (the busiest streams)
MAX_GPU_STREAMS = 8
#: fewest rectangles a lane is granted, however many lanes there are
MIN_LANE_RECTS = 50
#: longest name kept in the string table (kernel names can run to kilobytes)
MAX_NAME = 240


class Lane(TypedDict):
    """One lane's rectangles as columns (times in µs from the window start, names coded)."""

    id: str
    label: str
    kind: str  # ranges | cpu | sync | gpu
    n_events: int
    start: list[float]
    dur: list[float]
    count: list[int]  # events each rectangle spans
    name: list[int]  # its longest event's name, into `names`
    op: NotRequired[list[int]]  # GPU lanes: the launching op, into `names`
    shape: NotRequired[list[int]]  # and its input shapes


class GapColumns(TypedDict):
    """The longest GPU-idle gaps as columns (µs from the window start) with their causes."""

    start: list[float]
    dur: list[float]
    cause: list[str]


class StepMark(TypedDict):
    """Where a profiled step starts and ends (µs from the window start), its number as every
    view counts steps (1..n) and its time as the profiled series states it (`step_us`)."""

    step: int
    start: float
    end: float
    number: int
    dur_ms: float


class TimelineData(TypedDict):
    """The bounded timeline the views draw (see the module docstring)."""

    dur_us: float
    names: list[str]
    lanes: list[Lane]
    n_rects: int
    n_events: int
    max_rects: int
    n_gaps: int
    gaps: GapColumns
    steps: list[StepMark]
    input_ranges: bool
    profiled_scale: float | None
    phases: list[str]
    strings: list[str]
    detail: list[StepEvents | None]  # the events of a few typical steps, inline
    ranks_aligned_by: NotRequired[str]  # a multi-rank timeline: how its ranks were lined up
    counters: list[CounterTrack]  # sampled values under the lanes (GPU memory allocated)


class NameTable:
    """String table: each distinct name is stored once and referred to by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def code(self, name: str) -> int:
        name = name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…"
        if name not in self._index:
            self._index[name] = len(self.items)
            self.items.append(name)
        return self._index[name]

    def codes(self, names: np.ndarray) -> list[int]:
        return [self.code(str(n)) for n in names.tolist()]


def outermost(ts: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Mask of intervals (sorted by start) not nested inside an earlier one."""
    if len(ts) == 0:
        return np.zeros(0, dtype=bool)
    run_end = np.maximum.accumulate(end)
    keep = np.ones(len(ts), dtype=bool)
    keep[1:] = ts[1:] >= run_end[:-1]
    return keep


def _idle_breaks(ts: np.ndarray, end: np.ndarray, n_breaks: int,
                 keep: np.ndarray | None) -> np.ndarray:
    """Mask over events 1..n-1: a rectangle must end before event i.

    True where the idle stretch before event i holds one of the `keep` gaps ((start, end)
    rows: the gaps the views draw) or is one of the lane's `n_breaks` longest idle stretches.
    """
    run_end = np.maximum.accumulate(end)
    idle_from, idle_to = run_end[:-1], ts[1:]
    idle = idle_to - idle_from
    brk = np.zeros(len(idle), dtype=bool)
    if keep is not None and len(keep) and len(idle):
        # the idle stretch holding a drawn gap's middle: a rectangle must not cover it
        mid = (keep[:, 0] + keep[:, 1]) / 2
        i = np.clip(np.searchsorted(idle_to, mid, side="left"), 0, len(idle_to) - 1)
        hit = (idle_from[i] <= mid) & (mid <= idle_to[i])
        brk[i[hit]] = True
    free = n_breaks - int(brk.sum())
    if free > 0 and len(idle):
        longest = np.argsort(-idle, kind="stable")[:free]
        brk[longest[idle[longest] > 0]] = True
    return brk


def level_of_detail(ts: np.ndarray, end: np.ndarray, budget: int, lo: float, hi: float,
                    keep_gaps: np.ndarray | None = None,
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Group events (sorted by start) into about `budget` rectangles, never across idle time.

    Half the budget is time bins; the other half ends a rectangle at idle time: every gap of
    `keep_gaps` ((start, end) rows, the gaps the views draw) and the lane's longest idle
    stretches, so a merged bar is never drawn over a gap and stays within about `budget`.
    Returns (start, end, count, representative index) per rectangle; the representative is
    the longest event of its group. With no more events than `budget`, every event is kept.
    """
    n = len(ts)
    if n <= budget:
        return ts, end, np.ones(n, dtype=np.int64), np.arange(n)
    half = max(budget // 2, 1)
    span = hi - lo if hi > lo else 1.0
    brk = _idle_breaks(ts, end, budget - half, keep_gaps)
    bins = np.clip(((ts - lo) / (span / half)).astype(np.int64), 0, half - 1)
    new = np.concatenate(([True], (bins[1:] != bins[:-1]) | brk))
    group = np.cumsum(new) - 1
    first = np.flatnonzero(new)
    count = np.diff(np.concatenate((first, [n])))
    start = ts[first]
    stop = np.maximum.reduceat(end, first)
    order = np.lexsort((-(end - ts), group))  # per group, longest first
    gfirst = np.flatnonzero(np.concatenate(([True], group[order][1:] != group[order][:-1])))
    return start, stop, count, order[gfirst]


@dataclass
class LaneSpec:
    """One lane before binning: its id, label, kind and the events it draws (sorted by start)."""

    id: str
    label: str
    kind: str
    rows: pd.DataFrame
    linked: bool  # GPU lane: hover shows the launching op and its shapes


def _lane(spec: LaneSpec, budget: int, window: Window, names: NameTable,
          ops: pd.Series | None, shapes: pd.Series | None,
          keep_gaps: np.ndarray | None) -> Lane:
    """One lane's rectangles (times relative to the window start, µs)."""
    rows = in_window(spec.rows, window)
    ts = np.clip(rows["ts_us"].to_numpy(dtype=float), window.start_us, window.end_us)
    end = np.clip(rows["end_us"].to_numpy(dtype=float), window.start_us, window.end_us)
    start, stop, count, rep = level_of_detail(ts, end, budget, window.start_us, window.end_us,
                                              keep_gaps if spec.kind == "gpu" else None)
    name = rows["name"].astype(str).to_numpy()[rep]
    out: Lane = {
        "id": spec.id, "label": spec.label, "kind": spec.kind, "n_events": int(len(rows)),
        "start": np.round(start - window.start_us, 2).tolist(),
        "dur": np.round(stop - start, 2).tolist(), "count": count.tolist(),
        "name": names.codes(name),
    }
    ext = rows["external_id"].to_numpy()[rep]
    if spec.linked and ops is not None and shapes is not None:
        out["op"] = names.codes(pd.Series(ext).map(ops).fillna("").to_numpy(dtype=object))
        out["shape"] = names.codes(pd.Series(ext).map(shapes).fillna("").to_numpy(dtype=object))
    return out


def in_window(rows: pd.DataFrame, window: Window) -> pd.DataFrame:
    """The rows that overlap the analysed window."""
    return rows[(rows["end_us"] > window.start_us) & (rows["ts_us"] < window.end_us)]


def _op_lookup(trace: Trace) -> tuple[pd.Series, pd.Series]:
    """External id -> op name and -> input shapes, for hovering GPU activity."""
    ops = trace.of("cpu_op", columns=["name", "external_id", "input_dims"])
    ops = ops[ops["external_id"] >= 0].drop_duplicates("external_id")
    idx = ops["external_id"].to_numpy()
    return (pd.Series(ops["name"].astype(str).to_numpy(), index=idx),
            pd.Series(ops["input_dims"].astype(str).to_numpy(), index=idx))


def _busiest(groups: dict[Any, pd.DataFrame], n: int) -> list[Any]:
    return sorted(groups, key=lambda k: -float(groups[k]["dur_us"].sum()))[:n]


#: Kineto's generic thread name, "thread <tid> (<name>)": only the name in brackets tells anything
_AUTOGRAD = re.compile("autograd::engine|Backward")
_DATALOADER = re.compile("DataLoader|pin_memory|__next__")
_NCCL = re.compile("nccl", re.IGNORECASE)


_GENERIC_THREAD = re.compile(r"^thread \d+(?: \((?P<own>.*)\))?$")


def thread_label(tid: Any, rows: pd.DataFrame, main_tid: Any, number: int = 1,
                 own_name: str | None = None) -> str:
    """What a host thread is, in the words of its events: main, autograd, dataloader; else
    "CPU thread N" (N: its place among the drawn threads) with the trace's name for it."""
    if tid == main_tid:
        return "main thread"
    if names_matching(rows, _AUTOGRAD).mean() > 0.2:  # one scan of the distinct names
        return "autograd thread"
    if names_matching(rows, _DATALOADER).any():
        return "dataloader thread"
    generic = _GENERIC_THREAD.match(own_name or "")
    own = (generic.group("own") if generic else own_name) or ""
    return f"CPU thread {number} ({own})" if own else f"CPU thread {number}"


def stream_label(dev: int, stream: int, rows: pd.DataFrame, several_gpus: bool) -> str:
    """A GPU stream named by what mostly runs on it: compute, NCCL or copies."""
    nccl = float(rows["dur_us"].to_numpy()[names_matching(rows, _NCCL)].sum())
    copy = float(rows.loc[(rows["cat"] != "kernel").to_numpy(), "dur_us"].sum())
    total = float(rows["dur_us"].sum()) or 1.0
    what = "NCCL" if nccl / total > 0.5 else "copies" if copy / total > 0.5 else "compute"
    return f"{'GPU ' + str(dev) + ' ' if several_gpus else ''}stream {stream} {what}"


#: the columns a host lane's rows keep (what the lanes and their step detail read; the GPU-only
#: columns would be copied for nothing)
HOST_LANE_COLUMNS = ["cat", "name", "ts_us", "dur_us", "end_us", "pid", "tid", "external_id",
                     "correlation"]


def lane_specs(trace: Trace, window: Window) -> list[LaneSpec]:
    """Every lane the timeline draws, in order: host ranges, threads, syncs, GPU streams."""
    pid = window.pid

    def mine(df: pd.DataFrame) -> pd.DataFrame:
        keep = df["pid"].to_numpy() == pid
        return df if pid < 0 or keep.all() else df[keep]  # all of them: no copy

    specs: list[LaneSpec] = []
    marks = mine(trace.of("user_annotation", "cpu_op", columns=["name", "pid", "tid"]))
    is_step = names_where(marks, lambda n: STEP_NAME.match(n) is not None, STEP_PREFIX)
    main_tid = marks["tid"].to_numpy()[is_step][0] if is_step.any() else None
    ann = mine(trace.of("user_annotation"))
    ann = ann[~names_where(ann, lambda n: STEP_NAME.match(n) is not None, STEP_PREFIX)]
    if len(ann):
        ann = ann.sort_values("ts_us", kind="stable")
        specs.append(LaneSpec("cpu:ranges", "CPU ranges (phases, data)", "ranges",
                              ann[outermost(ann["ts_us"].to_numpy(), ann["end_us"].to_numpy())],
                              False))
    host = mine(trace.of("cpu_op", "cuda_runtime", columns=HOST_LANE_COLUMNS))
    tids, starts, ends = (host[c].to_numpy() for c in ("tid", "ts_us", "end_us"))
    # threads ranked on their summed durations (in order of appearance on ties); only the
    # threads drawn are taken whole
    dur = host["dur_us"]
    total = {tid: float(dur[tids == tid].sum()) for tid in pd.unique(tids).tolist()}
    busiest = sorted(total, key=lambda tid: -total[tid])[:MAX_CPU_THREADS]
    if main_tid is None and busiest:
        main_tid = busiest[0]
    own_names = trace.info.thread_names
    for number, tid in enumerate(busiest, start=1):
        mine_rows = np.flatnonzero(tids == tid)
        # in time order (stable), the outermost calls: positions first, one copy of those
        in_order = mine_rows[np.argsort(starts[mine_rows], kind="stable")]
        g = host.iloc[in_order[outermost(starts[in_order], ends[in_order])]]
        tpid = str(g["pid"].iloc[0]) if len(g) else ""
        label = thread_label(tid, host[["name"]].iloc[mine_rows], main_tid, number,
                             own_names.get((tpid, str(tid))))
        specs.append(LaneSpec(f"cpu:{tid}", label, "cpu", g, False))
    del host, tids, starts, ends
    runtime = mine(trace.of("cuda_runtime", "cuda_driver", columns=HOST_LANE_COLUMNS))
    sync = runtime[runtime["name"].isin(SYNC_APIS).to_numpy()]
    if len(sync):
        specs.append(LaneSpec("cpu:sync", "sync calls", "sync", sync, False))
    gpu = trace.of(*GPU_CATEGORIES)
    streams = {k: g for k, g in gpu.groupby(["device", "stream"], sort=True)}
    several = len({dev for dev, _ in streams}) > 1
    for dev, stream in sorted(_busiest(streams, MAX_GPU_STREAMS)):
        rows = streams[(dev, stream)]
        specs.append(LaneSpec(f"gpu:{dev}:{stream}", stream_label(dev, stream, rows, several),
                              "gpu", rows, True))
    return specs


def build_timeline(trace: Trace, window: Window, gaps: pd.DataFrame,
                   steps: pd.DataFrame | None = None, max_rects: int = MAX_RECTS,
                   profiled_scale: float | None = None, specs: list[LaneSpec] | None = None,
                   with_detail: bool = True) -> TimelineData:
    """The bounded timeline summary (see module docstring) of the analysed window.

    `specs`: the lanes to draw (default `lane_specs`); without `with_detail` no step carries
    its events inline (a rank's lanes in a multi-rank timeline, analysis/timeline_ranks.py).
    """
    from .timeline_detail import PHASES, inline_detail

    give_back_freed()  # what the analysis before freed: the lanes copy host rows again
    names = NameTable()
    specs = lane_specs(trace, window) if specs is None else specs
    budget = max(MIN_LANE_RECTS, max_rects // max(len(specs), 1))
    linked = any(s.linked for s in specs)
    op_names, op_shapes = _op_lookup(trace) if linked else (None, None)
    top = gaps.nlargest(MAX_GAPS, "dur_us").sort_values("start_us") if len(gaps) else gaps
    keep = top[["start_us", "end_us"]].to_numpy(dtype=float) if len(top) else None
    lanes = [_lane(s, budget, window, names, op_names, op_shapes, keep) for s in specs]
    del op_names, op_shapes  # one entry per op, and their hash tables: not needed below
    give_back_freed()
    step_rows = steps[steps["step"] >= 0] if steps is not None and len(steps) else None
    strings = NameTable()
    detail: list[StepEvents | None] = inline_detail(
        trace, window, specs, step_rows, strings) if with_detail else [
        None] * (0 if step_rows is None else len(step_rows))
    scale = profiled_scale if profiled_scale is not None and np.isfinite(profiled_scale) else None
    return {
        "dur_us": round(window.dur_us, 2), "names": names.items, "lanes": lanes,
        "n_rects": sum(len(lane["start"]) for lane in lanes),
        "n_events": sum(lane["n_events"] for lane in lanes),
        "max_rects": max_rects, "n_gaps": int(len(gaps)),
        "gaps": {"start": np.round(top["start_us"].to_numpy() - window.start_us, 2).tolist()
                 if len(top) else [],
                 "dur": np.round(top["dur_us"].to_numpy(), 2).tolist() if len(top) else [],
                 "cause": top["cause"].astype(str).tolist() if len(top) else []},
        "steps": [] if step_rows is None else [
            {"step": int(step), "start": round(float(start) - window.start_us, 2),
             "end": round(float(end) - window.start_us, 2), "number": k + 1,
             "dur_ms": round(float(dur) / 1e3, 4)}
            for k, (step, start, end, dur) in enumerate(zip(
                step_rows["step"].to_numpy(), step_rows["cpu_start_us"].to_numpy(),
                step_rows["end_us"].to_numpy(), step_rows["step_us"].to_numpy(), strict=True))],
        "input_ranges": bool(len(specs) and specs[0].kind == "ranges"
                             and names_where(specs[0].rows, is_input_range,
                                             INPUT_NEEDLES).any()),
        "profiled_scale": None if scale is None else round(float(scale), 4),
        "phases": list(PHASES), "strings": strings.items, "detail": detail,
        "counters": counter_tracks(trace, window),
    }
