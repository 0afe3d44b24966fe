"""Operator table: host (CPU) and device (CUDA) time per PyTorch operator, self and total."""

from __future__ import annotations

from typing import cast

import numpy as np
import pandas as pd

from .trace import GPU_CATEGORIES, Trace

OP_COLUMNS = {
    "name": "operator (aten::…, autograd node, or user range)",
    "calls": "number of calls in the window",
    "cpu_total_us": "host time including child ops", "cpu_self_us": "host time minus child ops",
    "cuda_total_us": "GPU time of activity launched by the op or its children",
    "cuda_self_us": "GPU time of activity launched directly by the op",
    "input_dims": "most common input shapes", "input_types": "most common input dtypes",
}


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
    need = end - 1e-3  # a child may end a hair after its parent (rounding)
    table = [end]
    while (1 << len(table)) <= n:
        prev, step = table[-1], 1 << (len(table) - 1)
        table.append(np.maximum(prev[:-step], prev[step:]))
    pos = np.arange(n)  # search [pos, i): every op there ends before `need`
    for k in range(len(table) - 1, -1, -1):
        width = 1 << k
        cand = pos - width
        ok = cand >= 0
        idx = np.where(ok, cand, 0)
        level = table[k]
        jump = ok & (level[np.minimum(idx, len(level) - 1)] < need)
        pos = np.where(jump, cand, pos)
    has = (pos > 0) & (end[np.maximum(pos - 1, 0)] >= need)
    parent[order[has]] = order[pos[has] - 1]
    return parent


def op_rows(trace: Trace, lo: float = -np.inf, hi: float = np.inf) -> pd.DataFrame:
    """One row per op call in [lo, hi] with self/total CPU and CUDA time and its parent."""
    ops = trace.of("cpu_op")
    ops = ops[(ops["ts_us"] >= lo) & (ops["ts_us"] <= hi)].reset_index(drop=True)
    parent = _nest(ops)
    dur = ops["dur_us"].to_numpy()
    child_sum = np.bincount(parent[parent >= 0], weights=dur[parent >= 0], minlength=len(ops))
    gpu = trace.of(*GPU_CATEGORIES)
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
        cuda_self_us=cuda_self, cuda_total_us=cuda_total,
    )


def _most_common(rows: pd.DataFrame, keys: list[str], column: str) -> pd.Series:
    """Most frequent value of `column` per key group (vectorised mode)."""
    counts = rows.groupby(keys + [column], sort=False, observed=True).size()
    counts = counts.sort_values(ascending=False, kind="stable")
    index = cast(pd.MultiIndex, counts.index)
    top = counts[~index.droplevel(column).duplicated()]
    top_index = cast(pd.MultiIndex, top.index)
    return pd.Series(top_index.get_level_values(column), index=top_index.droplevel(column))


def op_table(rows: pd.DataFrame, by_shape: bool = False) -> pd.DataFrame:
    """Aggregate op calls by name (and shapes): columns in `OP_COLUMNS`, slowest on GPU first."""
    if rows.empty:
        return pd.DataFrame(columns=list(OP_COLUMNS))
    keys = ["name", "input_dims"] if by_shape else ["name"]
    g = rows.groupby(keys, sort=False, observed=True)
    out = g.agg(
        calls=("dur_us", "size"), cpu_total_us=("dur_us", "sum"),
        cpu_self_us=("cpu_self_us", "sum"), cuda_total_us=("cuda_total_us", "sum"),
        cuda_self_us=("cuda_self_us", "sum"),
    ).reset_index()
    if not by_shape:
        out["input_dims"] = out["name"].map(_most_common(rows, keys, "input_dims"))
    types = _most_common(rows, keys, "input_types")
    lookup = dict(zip(types.index, types.to_numpy(), strict=True))  # Series.get per row is slow
    out["input_types"] = [lookup.get(tuple(r) if by_shape else r[0], "") for r in out[keys].values]
    out = out[list(OP_COLUMNS)].astype({"name": str})
    return out.sort_values(["cuda_total_us", "cpu_total_us"], ascending=False, ignore_index=True)
