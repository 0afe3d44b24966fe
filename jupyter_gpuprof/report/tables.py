"""The operator and kernel rows a summary ships, with the figures every view shows decided
here: calls per step, % of GPU time and % of step side by side, each op's shapes and kernels,
each kernel's launching ops, and how much of the GPU time the shipped kernels cover."""

from __future__ import annotations

import math
from typing import Any

import msgspec
import numpy as np
import pandas as pd

from .. import units
from ..analysis.summary import Analysis
from .basis import kernels_per_step
from .model_tables import KernelRow, KernelTable, OpKernel, OpRow, OpShape

#: kernels shipped: every kernel of a usual run (the Kernels tab pages and filters them all)
KERNEL_ROWS = 2000
OP_ROWS = 200  # the widget's operator table sorts and filters these rows
SHAPES_PER_OP = 50  # input-shape lists per op, most calls first
KERNELS_PER_OP = 20
OPS_PER_KERNEL = 5


def _records(df: pd.DataFrame, n: int) -> list[dict[str, Any]]:
    return [{str(k): v for k, v in r.items()} for r in df.head(n).to_dict(orient="records")]


def _finite(value: Any) -> float | None:
    v = float(value)
    return v if math.isfinite(v) else None


def _gpu_total_us(a: Analysis) -> float:
    """All GPU activity of the profiled steps: the denominator of every `pct_of_gpu`."""
    return float(a.kernels["total_us"].sum()) if len(a.kernels) else 0.0


def kernel_rows(a: Analysis) -> list[KernelRow]:
    """Every kernel (up to `KERNEL_ROWS`), longest first, with calls per step and its ops."""
    k = kernels_per_step(a).head(KERNEL_ROWS)
    n = max(a.n_steps, 1)
    links = a.op_kernels
    rows = _records(k, KERNEL_ROWS)
    ops_of: dict[str, list[str]] = {}
    if len(links):
        # the shipped kernels' top ops in one pass (a frame per kernel cost 6 s on 33 k kernels)
        shipped = links[_text_in(links["kernel"], {str(r["name"]) for r in rows})]
        ranked = shipped.sort_values("total_us", ascending=False, kind="stable")
        top = ranked.groupby("kernel", sort=False).head(OPS_PER_KERNEL)
        for kernel, op in zip(top["kernel"].astype(str), top["op"].astype(str), strict=True):
            ops_of.setdefault(kernel, []).append(op)
    out = []
    for r in rows:
        r["calls_per_step"] = float(r["calls"]) / n
        r["occupancy_pct"] = _finite(r.get("occupancy_pct", math.nan))
        r["ops"] = ops_of.get(str(r["name"]), [])
        out.append(msgspec.convert(r, KernelRow))
    return out


def kernel_table(a: Analysis) -> KernelTable:
    """How many kernels the summary ships of how many, and the GPU time they cover."""
    total, shown = len(a.kernels), min(len(a.kernels), KERNEL_ROWS)
    gpu = _gpu_total_us(a)
    covered = (100.0 * float(a.kernels["total_us"].head(shown).sum()) / gpu) if gpu else None
    noun = "kernel" if total == 1 else "kernels"
    label = (f"{shown} of {total} {noun}, covering {units.pct(covered, 1)} of GPU time"
             if covered is not None else f"{shown} of {total} {noun}")
    return KernelTable(shown=shown, total=total, covered_pct_of_gpu=covered, label=label)


def _of_ops(table: pd.DataFrame, ops: set[str]) -> pd.DataFrame:
    """The rows of the shipped ops only: a trace of 666 k distinct names ships 200 of them,
    and grouping every op's rows cost a pandas frame per op (13× the few-names time)."""
    return table[_text_in(table["op"], ops)] if len(table) else table


def _text_in(values: pd.Series, chosen: set[str]) -> np.ndarray:
    """Mask of the values whose text is one of `chosen`, hashed in C (a string column's
    `isin` took 0.2 s on 333 k distinct names)."""
    return np.fromiter(map(chosen.__contains__, map(str, values.to_numpy(dtype=object))),
                       dtype=bool, count=len(values))


def _shapes(a: Analysis, ops: set[str]) -> dict[str, list[OpShape]]:
    n, gpu = max(a.n_steps, 1), _gpu_total_us(a)
    out: dict[str, list[OpShape]] = {}
    for op, rows in _by_op(_of_ops(a.op_shapes, ops), SHAPES_PER_OP).items():
        out[op] = [OpShape(input_dims=str(r["input_dims"]), calls=int(r["calls"]),
                           calls_per_step=float(r["calls"]) / n,
                           cuda_self_ms_per_step=float(r["cuda_self_us"]) / 1e3 / n,
                           pct_of_gpu=100.0 * float(r["cuda_self_us"]) / gpu if gpu else None)
                   for r in rows]
    return out


def _by_op(table: pd.DataFrame, n: int) -> dict[str, list[dict[str, Any]]]:
    """The first `n` records of each op, ops in order of appearance: one conversion of the
    rows kept (a frame and a conversion per op cost most of the report's tables; converting
    every row, an op of 83 k kernels' 83 k rows to ship 20)."""
    out: dict[str, list[dict[str, Any]]] = {}
    if len(table):
        table = table.groupby("op", sort=False, observed=True).head(n)
    for r in _records(table, len(table)):
        op = r["op"]
        if op is None or (isinstance(op, float) and op != op):  # grouping left these out
            continue
        rows = out.setdefault(str(op), [])
        if len(rows) < n:
            rows.append(r)
    return out


def _kernels(a: Analysis, ops: set[str]) -> dict[str, list[OpKernel]]:
    n = max(a.n_steps, 1)
    out: dict[str, list[OpKernel]] = {}
    for op, rows in _by_op(_of_ops(a.op_kernels, ops), KERNELS_PER_OP).items():
        out[op] = [OpKernel(name=str(r["kernel"]), short_name=str(r["short_name"]),
                            calls_per_step=float(r["calls"]) / n,
                            ms_per_step=float(r["total_us"]) / 1e3 / n)
                   for r in rows]
    return out


def op_rows(a: Analysis, ordered: pd.DataFrame) -> list[OpRow]:
    """The first `OP_ROWS` ops in the verdict's order, each with its share of GPU time, its
    input shapes and the kernels it launched."""
    gpu = _gpu_total_us(a)
    rows = _records(ordered, OP_ROWS)
    shipped = {str(r["name"]) for r in rows}
    shapes, kernels = _shapes(a, shipped), _kernels(a, shipped)
    out = []
    for r in rows:
        name = str(r["name"])
        r["pct_of_gpu"] = 100.0 * float(r["cuda_self_us"]) / gpu if gpu else None
        r["shapes"], r["kernels"] = shapes.get(name, []), kernels.get(name, [])
        out.append(msgspec.convert(r, OpRow))
    return out
