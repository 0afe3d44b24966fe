"""The operator and kernel rows a summary ships, with the figures every view shows decided
here: calls per step, % of GPU time and % of step side by side, each op's shapes and kernels,
each kernel's launching ops, and how much of the GPU time the shipped kernels cover."""

from __future__ import annotations

import math
from typing import Any

import msgspec
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
    ops_of: dict[str, list[str]] = {}
    if len(links):
        ranked = links.sort_values("total_us", ascending=False, kind="stable")
        for kernel, group in ranked.groupby("kernel", sort=False):
            ops_of[str(kernel)] = [str(o) for o in group["op"].head(OPS_PER_KERNEL)]
    out = []
    for r in _records(k, KERNEL_ROWS):
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


def _shapes(a: Analysis) -> dict[str, list[OpShape]]:
    n, gpu = max(a.n_steps, 1), _gpu_total_us(a)
    out: dict[str, list[OpShape]] = {}
    for op, group in a.op_shapes.groupby("op", sort=False):
        out[str(op)] = [OpShape(input_dims=str(r["input_dims"]), calls=int(r["calls"]),
                                calls_per_step=float(r["calls"]) / n,
                                cuda_self_ms_per_step=float(r["cuda_self_us"]) / 1e3 / n,
                                pct_of_gpu=100.0 * float(r["cuda_self_us"]) / gpu if gpu
                                else None)
                        for r in _records(group, SHAPES_PER_OP)]
    return out


def _kernels(a: Analysis) -> dict[str, list[OpKernel]]:
    n = max(a.n_steps, 1)
    out: dict[str, list[OpKernel]] = {}
    for op, group in a.op_kernels.groupby("op", sort=False):
        out[str(op)] = [OpKernel(name=str(r["kernel"]), short_name=str(r["short_name"]),
                                 calls_per_step=float(r["calls"]) / n,
                                 ms_per_step=float(r["total_us"]) / 1e3 / n)
                        for r in _records(group, KERNELS_PER_OP)]
    return out


def op_rows(a: Analysis, ordered: pd.DataFrame) -> list[OpRow]:
    """The first `OP_ROWS` ops in the verdict's order, each with its share of GPU time, its
    input shapes and the kernels it launched."""
    gpu = _gpu_total_us(a)
    shapes, kernels = _shapes(a), _kernels(a)
    out = []
    for r in _records(ordered, OP_ROWS):
        name = str(r["name"])
        r["pct_of_gpu"] = 100.0 * float(r["cuda_self_us"]) / gpu if gpu else None
        r["shapes"], r["kernels"] = shapes.get(name, []), kernels.get(name, [])
        out.append(msgspec.convert(r, OpRow))
    return out
