"""A bounded, level-of-detail timeline of the profiled window, so views never need the trace.

A 300 MB trace holds millions of events; a browser can draw a few thousand rectangles. Each
lane (CPU ranges, CPU threads, sync calls, GPU streams) gets a share of `MAX_RECTS`; a lane with
more events than its share is binned by start time and every bin becomes one rectangle that
spans its events, counts them and is labelled by its longest one. Gaps keep their causes; only
the `MAX_GAPS` longest are shipped. The result is plain JSON (columnar lists, a string table).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .hostwork import SYNC_APIS, is_input_range
from .steps import STEP_NAME, Window
from .trace import GPU_CATEGORIES, Trace, names_where

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


class _Names:
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


def level_of_detail(ts: np.ndarray, end: np.ndarray, budget: int, lo: float,
                    hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Bin events (sorted by start) into at most `budget` rectangles.

    Returns (start, end, count, representative index) per rectangle; the representative is
    the longest event of its bin. With no more events than `budget`, every event is kept.
    """
    n = len(ts)
    if n <= budget:
        return ts, end, np.ones(n, dtype=np.int64), np.arange(n)
    width = (hi - lo) / budget if hi > lo else 1.0
    bins = np.clip(((ts - lo) / width).astype(np.int64), 0, budget - 1)
    first = np.flatnonzero(np.concatenate(([True], bins[1:] != bins[:-1])))
    count = np.diff(np.concatenate((first, [n])))
    start = ts[first]
    stop = np.maximum.reduceat(end, first)
    order = np.lexsort((-(end - ts), bins))  # per bin, longest first
    gfirst = np.flatnonzero(np.concatenate(([True], bins[order][1:] != bins[order][:-1])))
    return start, stop, count, order[gfirst]


def _lane(lane_id: str, label: str, kind: str, rows: pd.DataFrame, budget: int, window: Window,
          names: _Names, ops: pd.Series | None = None,
          shapes: pd.Series | None = None) -> dict[str, Any]:
    """One lane's rectangles (times relative to the window start, µs)."""
    rows = rows[(rows["end_us"] > window.start_us) & (rows["ts_us"] < window.end_us)]
    ts = np.clip(rows["ts_us"].to_numpy(dtype=float), window.start_us, window.end_us)
    end = np.clip(rows["end_us"].to_numpy(dtype=float), window.start_us, window.end_us)
    start, stop, count, rep = level_of_detail(ts, end, budget, window.start_us, window.end_us)
    name = rows["name"].astype(str).to_numpy()[rep]
    out: dict[str, Any] = {
        "id": lane_id, "label": label, "kind": kind, "n_events": int(len(rows)),
        "start": np.round(start - window.start_us, 2).tolist(),
        "dur": np.round(stop - start, 2).tolist(), "count": count.tolist(),
        "name": names.codes(name),
    }
    ext = rows["external_id"].to_numpy()[rep]
    if ops is not None:
        out["op"] = names.codes(pd.Series(ext).map(ops).fillna("").to_numpy(dtype=object))
    if shapes is not None:
        out["shape"] = names.codes(pd.Series(ext).map(shapes).fillna("").to_numpy(dtype=object))
    return out


def _op_lookup(trace: Trace) -> tuple[pd.Series, pd.Series]:
    """External id -> op name and -> input shapes, for hovering GPU activity."""
    ops = trace.of("cpu_op")
    ops = ops[ops["external_id"] >= 0].drop_duplicates("external_id")
    idx = ops["external_id"].to_numpy()
    return (pd.Series(ops["name"].astype(str).to_numpy(), index=idx),
            pd.Series(ops["input_dims"].astype(str).to_numpy(), index=idx))


def _busiest(groups: dict[Any, pd.DataFrame], n: int) -> list[Any]:
    return sorted(groups, key=lambda k: -float(groups[k]["dur_us"].sum()))[:n]


def build_timeline(trace: Trace, window: Window, gaps: pd.DataFrame,
                   steps: pd.DataFrame | None = None,
                   max_rects: int = MAX_RECTS) -> dict[str, Any]:
    """The bounded timeline summary (see module docstring) of the analysed window."""
    names = _Names()
    pid = window.pid

    def mine(df: pd.DataFrame) -> pd.DataFrame:
        return df if pid < 0 else df[df["pid"].to_numpy() == pid]

    specs: list[tuple[str, str, str, pd.DataFrame, bool]] = []
    ann = mine(trace.of("user_annotation"))
    ann = ann[~names_where(ann, lambda n: STEP_NAME.match(n) is not None)]
    if len(ann):
        ann = ann.sort_values("ts_us", kind="stable")
        specs.append(("cpu:ranges", "CPU ranges (phases, data)", "ranges",
                      ann[outermost(ann["ts_us"].to_numpy(), ann["end_us"].to_numpy())], False))
    host = mine(trace.of("cpu_op", "cuda_runtime"))
    threads = {t: g for t, g in host.groupby("tid", sort=False)}
    for tid in _busiest(threads, MAX_CPU_THREADS):
        g = threads[tid].sort_values("ts_us", kind="stable")
        g = g[outermost(g["ts_us"].to_numpy(), g["end_us"].to_numpy())]
        specs.append((f"cpu:{tid}", f"CPU thread {tid}", "cpu", g, False))
    runtime = mine(trace.of("cuda_runtime", "cuda_driver"))
    sync = runtime[runtime["name"].isin(SYNC_APIS).to_numpy()]
    if len(sync):
        specs.append(("cpu:sync", "sync calls", "sync", sync, False))
    gpu = trace.of(*GPU_CATEGORIES)
    streams = {k: g for k, g in gpu.groupby(["device", "stream"], sort=True)}
    for dev, stream in sorted(_busiest(streams, MAX_GPU_STREAMS)):
        specs.append((f"gpu:{dev}:{stream}", f"GPU {dev} stream {stream}", "gpu",
                      streams[(dev, stream)], True))
    budget = max(MIN_LANE_RECTS, max_rects // max(len(specs), 1))
    op_names, op_shapes = _op_lookup(trace) if len(gpu) else (None, None)
    lanes = [_lane(i, label, kind, rows, budget, window, names,
                   op_names if linked else None, op_shapes if linked else None)
             for i, label, kind, rows, linked in specs]
    top = gaps.nlargest(MAX_GAPS, "dur_us").sort_values("start_us") if len(gaps) else gaps
    step_rows = steps[steps["step"] >= 0] if steps is not None and len(steps) else None
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
             "end": round(float(end) - window.start_us, 2)}
            for step, start, end in zip(step_rows["step"].to_numpy(),
                                        step_rows["cpu_start_us"].to_numpy(),
                                        step_rows["end_us"].to_numpy(), strict=True)],
        "input_ranges": bool(len(ann)) and bool(names_where(ann, is_input_range).any()),
    }
