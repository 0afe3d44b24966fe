"""Operator table: host (CPU) and device (CUDA) time per PyTorch operator, self and total.

Kineto links each kernel to the innermost op that launched it, so `cuda_self_us` is the
op's own device time and sums to the GPU time once; the table sorts by it. Autograd nodes
(`MmBackward0`, `autograd::engine::evaluate_function: …`) only wrap the ops that do the work:
they are folded away and named in the `autograd` column of the ops they called, so the same
kernels never appear two or three times.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .grouping import first_rows, group_codes, most_common_rows, values_at
from .kineto_json import GPU_CATEGORIES
from .name_masks import containing, per_name
from .trace import Trace

OP_COLUMNS = {
    "name": "operator (aten::…, autograd node, or user range)",
    "calls": "number of calls in the window",
    "cpu_total_us": "host time including child ops", "cpu_self_us": "host time minus child ops",
    "cuda_total_us": "GPU time of activity launched by the op or its children",
    "cuda_self_us": "GPU time of activity launched directly by the op",
    "input_dims": "most common input shapes", "input_types": "most common input dtypes",
    "autograd": "the autograd node its backward calls most often ran under, else empty",
}
#: per-step columns (`per_step`): real ms per step, per call, share of the real step
PER_STEP_COLUMNS = {
    "calls_per_step": "calls per profiled step",
    "cuda_self_ms_per_step": "own GPU time per step (ms; kernel time barely changes under "
                             "the profiler)",
    "cuda_total_ms_per_step": "GPU time of the op and its children per step (ms)",
    "cpu_self_ms_per_step": "host self time per step, rescaled to the unprofiled step (ms)",
    "cuda_us_per_call": "own GPU time per call (µs)",
    "cpu_us_per_call": "host self time per call, rescaled like cpu_self_ms_per_step (µs)",
    "gpu_pct_of_step": "own GPU time as % of the real step",
    "cpu_pct_of_step": "host self time as % of the real step",
}
#: the event table's columns an op call keeps (`op_rows`): what the op, sync and link tables
#: read; the GPU-only columns would only be copied
OP_ROW_COLUMNS = ["name", "ts_us", "dur_us", "end_us", "pid", "tid", "external_id",
                  "input_dims", "input_types"]
#: an autograd node: PyTorch's backward function objects and the engine's wrapper around them
AUTOGRAD_NODE = re.compile(
    r"^(autograd::engine::evaluate_function: )?"
    r"([\w:]*Backward\d*|torch::autograd::AccumulateGrad|torch::autograd::CopySlices)$")


def autograd_node(name: str) -> str:
    """The node's name when `name` is an autograd wrapper (engine prefix dropped), else ''."""
    m = AUTOGRAD_NODE.match(name)
    return m.group(2) if m else ""


def autograd_nodes(names: np.ndarray) -> np.ndarray:
    """`autograd_node` of each name (object strings), the rule run only on the names holding
    one of the texts every node's name holds ("Backward", "torch::autograd::")."""
    out = np.full(len(names), "", dtype=object)
    todo = containing(names, ("Backward", "torch::autograd::"))
    out[todo] = [autograd_node(str(n)) for n in names[todo]]
    return out


def _nest(ops: pd.DataFrame) -> np.ndarray:
    """Parent row position of every op (-1 for top level), per thread, by time containment."""
    n = len(ops)
    parent = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return parent
    ts_a, end_a = ops["ts_us"].to_numpy(), ops["end_us"].to_numpy()
    thread = ops["pid"].to_numpy() * (1 << 32) + ops["tid"].to_numpy()
    # parents first: by thread, then start, then longest first
    order = np.lexsort((-end_a, ts_a, thread))
    # the parent is the nearest earlier op (in this order) whose end is not before ours: a
    # "previous greater element" search, done for all ops at once by binary lifting over a
    # sparse table of range maxima; each thread's ends are lifted above every earlier thread's,
    # so no search crosses into another thread
    t_sorted = thread[order]
    lane = np.concatenate(([0], np.cumsum(t_sorted[1:] != t_sorted[:-1])))
    span = float(end_a.max() - ts_a.min()) + 1.0
    end = end_a[order] - ts_a.min() + lane * 2 * span
    del thread, t_sorted, lane
    need = end - 1e-3  # a child may end a hair after its parent (rounding)
    levels = 1
    while (1 << levels) <= n:
        levels += 1
    # level k holds the maxima of 2**k ends; only every _KEPT_LEVELS-th level is kept, the
    # ones between are rebuilt from it when the search reaches them (n·log n floats otherwise)
    kept = {0: end}
    level = end
    for k in range(1, levels):
        level = _doubled(level, k)
        if k % _KEPT_LEVELS == 0:
            kept[k] = level
    del level
    pos = np.arange(n)  # search [pos, i): every op there ends before `need`
    for base in sorted(kept, reverse=True):
        group = [kept.pop(base)]
        for k in range(base + 1, min(base + _KEPT_LEVELS, levels)):
            group.append(_doubled(group[-1], k))
        for k in range(base + len(group) - 1, base - 1, -1):
            width = 1 << k
            cand = pos - width
            ok = cand >= 0
            idx = np.where(ok, cand, 0)
            level = group.pop()
            jump = ok & (level[np.minimum(idx, len(level) - 1)] < need)
            pos = np.where(jump, cand, pos)
    has = (pos > 0) & (end[np.maximum(pos - 1, 0)] >= need)
    parent[order[has]] = order[pos[has] - 1]
    return parent


#: `_nest` keeps one level of its table of range maxima in this many (memory: n·log n / 4)
_KEPT_LEVELS = 4


def _doubled(level: np.ndarray, k: int) -> np.ndarray:
    """Level k of the table of range maxima from level k − 1: maxima of 2**k ends."""
    step = 1 << (k - 1)
    out: np.ndarray = np.maximum(level[:-step], level[step:])
    return out


def op_rows(trace: Trace, lo: float = -np.inf, hi: float = np.inf) -> pd.DataFrame:
    """One row per op call in [lo, hi] with self/total CPU and CUDA time and its parent."""
    ops = trace.of("cpu_op", columns=OP_ROW_COLUMNS)
    ops = ops[(ops["ts_us"] >= lo) & (ops["ts_us"] <= hi)].reset_index(drop=True)
    parent = _nest(ops)
    dur = ops["dur_us"].to_numpy()
    child_sum = np.bincount(parent[parent >= 0], weights=dur[parent >= 0], minlength=len(ops))
    gpu = trace.of(*GPU_CATEGORIES, columns=["external_id", "dur_us"])
    gpu_by_ext = gpu[gpu["external_id"] >= 0].groupby("external_id")["dur_us"].sum()
    cuda_self = ops["external_id"].map(gpu_by_ext).fillna(0.0).to_numpy()
    # every op's GPU time also counts for each of its ancestors: climb one level per pass
    cuda_total = cuda_self.copy()
    up = parent.copy()
    carry = cuda_self.copy()
    live = (up >= 0) & (carry > 0)
    while live.any():
        np.add.at(cuda_total, up[live], carry[live])
        up = np.where(live, parent[np.clip(up, 0, None)], -1)
        live = (up >= 0) & (carry > 0)
    return ops.assign(
        parent=parent, cpu_self_us=np.clip(dur - child_sum, 0.0, None),
        cuda_self_us=cuda_self, cuda_total_us=cuda_total, **_autograd(ops, parent),
    )


def _autograd(ops: pd.DataFrame, parent: np.ndarray) -> dict[str, np.ndarray]:
    """`wrapper` (the op is an autograd node) and `autograd` (the node an op ran under)."""
    if hasattr(ops["name"], "cat"):
        node = per_name(ops, autograd_nodes, "")
    else:
        node = np.array([autograd_node(str(n)) for n in ops["name"]], dtype=object)
    wrapper = node != ""
    under = np.full(len(ops), "", dtype=object)
    # climb through wrappers: the nearest wrapper ancestor names the node
    up = parent.copy()
    todo = ~wrapper & (up >= 0)
    while todo.any():
        idx = np.flatnonzero(todo)
        anc = up[idx]
        hit = wrapper[anc]
        under[idx[hit]] = node[anc[hit]]
        todo[idx[hit]] = False
        up[idx[~hit]] = parent[anc[~hit]]
        todo &= up >= 0
    return {"wrapper": wrapper, "autograd": under}


def op_table(rows: pd.DataFrame, by_shape: bool = False) -> pd.DataFrame:
    """Aggregate op calls by name (and shapes): columns in `OP_COLUMNS`, slowest on GPU first.

    Grouped on codes (`grouping`): a trace of 666 k distinct op names paid pandas' recoding
    of its names per grouping, and a lookup per op for each most common value."""
    if "wrapper" in rows:  # only the columns read here are copied
        read = ["name", "input_dims", "input_types", "dur_us", "cpu_self_us", "cuda_total_us",
                "cuda_self_us", "autograd"]
        rows = rows[[c for c in read if c in rows]][~rows["wrapper"].to_numpy(dtype=bool)]
    if rows.empty:
        return pd.DataFrame(columns=list(OP_COLUMNS))
    rows = rows.reset_index(drop=True)
    keys = ["name", "input_dims"] if by_shape else ["name"]
    group = group_codes(rows, keys)
    n = int(group.max()) + 1 if len(group) else 0
    out = pd.DataFrame({"g": group, **{c: rows[c].to_numpy() for c in _SUMMED}})
    out = out[group >= 0].groupby("g", sort=False).agg(
        calls=("dur_us", "size"), cpu_total_us=("dur_us", "sum"),
        cpu_self_us=("cpu_self_us", "sum"), cuda_total_us=("cuda_total_us", "sum"),
        cuda_self_us=("cuda_self_us", "sum"),
    ).reset_index(drop=True)
    first = first_rows(group)
    for key in keys:
        out[key] = values_at(rows[key], first)
    if not by_shape:
        out["input_dims"] = values_at(rows["input_dims"],
                                      most_common_rows(group, rows["input_dims"], n))
    out["input_types"] = _most_common_text(group, rows["input_types"], n)
    if "autograd" in rows:
        node = rows["autograd"].astype(str)
        out["autograd"] = _most_common_text(np.where(node.to_numpy() != "", group, -1), node, n)
    else:
        out["autograd"] = ""
    out = out[list(OP_COLUMNS)].astype({"name": str})
    return out.sort_values(["cuda_self_us", "cpu_self_us"], ascending=False, ignore_index=True)


_SUMMED = ("dur_us", "cpu_self_us", "cuda_total_us", "cuda_self_us")


def _most_common_text(group: np.ndarray, values: pd.Series, n: int) -> list[str]:
    """Each group's most frequent value of `values` as text ('' where it has none)."""
    best = most_common_rows(group, values, n)
    if not len(values):
        return [""] * n
    taken = np.array(list(map(str, values.to_numpy(dtype=object)[np.where(best >= 0, best, 0)])),
                     dtype=object)  # str() in C: one per op, 333 k distinct ops
    taken[best < 0] = ""
    return list(taken)


def per_step(table: pd.DataFrame, n_steps: int, real_step_ms: float,
             host_scale: float = 1.0) -> pd.DataFrame:
    """The op table with `PER_STEP_COLUMNS` added: each time per real step and per call.

    `host_scale` (real step over profiled step) takes the profiler's inflation out of host
    times; GPU times are divided by the step count only.
    """
    n = max(n_steps, 1)
    calls = table["calls"].to_numpy(dtype=float)
    cuda_self = table["cuda_self_us"].to_numpy(dtype=float)
    cpu_self = table["cpu_self_us"].to_numpy(dtype=float) * host_scale
    per_call = np.maximum(calls, 1.0)
    step_us = real_step_ms * 1e3 if real_step_ms > 0 else np.nan
    return table.assign(
        calls_per_step=calls / n, cuda_self_ms_per_step=cuda_self / 1e3 / n,
        cuda_total_ms_per_step=table["cuda_total_us"].to_numpy(dtype=float) / 1e3 / n,
        cpu_self_ms_per_step=cpu_self / 1e3 / n, cuda_us_per_call=cuda_self / per_call,
        cpu_us_per_call=cpu_self / per_call, gpu_pct_of_step=100.0 * cuda_self / n / step_us,
        cpu_pct_of_step=100.0 * cpu_self / n / step_us)


#: verdicts whose culprit is a host-side call: their op table leads with host time
HOST_ORDER = ("input", "host", "launch", "sync")


def sort_key(category: str | None) -> str:
    """The column the op table of a verdict is ordered by (every view keeps that order): host
    time with the op's children, so the call the user made (`aten::item`, `aten::to`) leads its
    children, when the host holds the GPU back; own GPU time otherwise."""
    return "cpu_total_us" if category in HOST_ORDER else "cuda_self_us"


def sort_for(table: pd.DataFrame, category: str | None) -> pd.DataFrame:
    """Rows in the order a verdict reads them (`sort_key`; ties by self time)."""
    return table.sort_values([sort_key(category), "cpu_self_us"], ascending=False,
                             ignore_index=True, kind="stable")
