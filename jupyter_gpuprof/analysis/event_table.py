"""Decoded events -> the columnar event table (and the allocator's own small table).

One C-level pass per column over the rows that carry it (attrgetter and `np.fromiter`), names as
categoricals; the table is laid out by category, then time, so `Trace.of()` slices it.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import numpy.typing as npt

from .event_fields import (
    ALL_CATEGORIES,
    CAT_CODE,
    GPU_CODES,
    MEMORY_COLUMNS,
    event_column,
    id_column,
    pick_column,
    sparse_column,
    sparse_float_column,
)
from .kineto_json import (
    GPU_CATEGORIES,
    MEMORY_DEVICE_TYPE_CUDA,
    NO_ARGS,
    KinetoArgs,
    KinetoEvent,
)
from .trace_validate import Drops, valid_times


def _categorical(values: Iterable[str], n: int) -> pd.Categorical:
    """Categorical column from repeated strings, coded through one dict pass in C."""
    seen: dict[str, int] = {}
    first = np.fromiter(map(seen.setdefault, values, itertools.count()), np.int64, count=n)
    # each name's code is the position where it first appeared; make them dense
    codes = np.searchsorted(np.fromiter(seen.values(), np.int64, count=len(seen)), first)
    return pd.Categorical.from_codes(codes.astype(np.int32),
                                     categories=pd.Index(list(seen), dtype=object))


def _json_column(args: list[KinetoArgs], attr: str, rows: np.ndarray, n: int) -> pd.Categorical:
    """A categorical of the raw JSON text of one args field ("" where absent), decoded once per
    distinct value: shapes and dtypes repeat across thousands of op calls."""
    seen: dict[bytes, int] = {b"": 0}
    first = np.zeros(n, dtype=np.int64)
    first[rows] = np.fromiter(map(seen.setdefault, map(bytes, map(attrgetter(attr), args)),
                                  itertools.count(1)), np.int64, count=len(rows))
    codes = np.searchsorted(np.fromiter(seen.values(), np.int64, count=len(seen)), first)
    texts = pd.Index([raw.decode() for raw in seen], dtype=object)
    return pd.Categorical.from_codes(codes.astype(np.int32), categories=texts)


def memory_events(mems: list[KinetoEvent]) -> pd.DataFrame:
    """The allocator instants as their own small table (columns `MEMORY_COLUMNS`)."""
    args = [e.args or NO_ARGS for e in mems]
    on_gpu = event_column(args, "device_type") == MEMORY_DEVICE_TYPE_CUDA
    return pd.DataFrame({
        "ts_us": event_column(mems, "ts", np.float64),
        "device": np.where(on_gpu, event_column(args, "device_id"), -1),
        "bytes": event_column(args, "mem_bytes"),
        "total_allocated": event_column(args, "total_allocated"),
    }, columns=list(MEMORY_COLUMNS))


def valid_columns(rows: list[KinetoEvent], drops: Drops
                   ) -> tuple[list[KinetoEvent], np.ndarray, np.ndarray, np.ndarray]:
    """The rows with valid times and their category code, ts and dur columns (numpy checks)."""
    code = np.fromiter(map(CAT_CODE.__getitem__, map(attrgetter("cat"), rows)), np.int8,
                       count=len(rows))
    ts, dur = event_column(rows, "ts", np.float64), event_column(rows, "dur", np.float64)
    ok = valid_times(ts, dur, np.isin(code, GPU_CODES), drops)
    if ok.all():
        return rows, code, ts, dur
    return pick_column(rows, np.flatnonzero(ok)), code[ok], ts[ok], dur[ok]


def valid_memory_events(mems: list[KinetoEvent], drops: Drops) -> list[KinetoEvent]:
    """The allocator instants whose time is valid (the others counted into `drops`)."""
    no_gpu = np.zeros(len(mems), dtype=bool)
    times = event_column(mems, "ts", np.float64)
    return pick_column(mems, np.flatnonzero(valid_times(times, None, no_gpu, drops)))


def valid_ts(mems: list[KinetoEvent]) -> np.ndarray:
    """The allocator instants' start times (already validated), as one column."""
    return event_column(mems, "ts", np.float64)


def n_gpu_rows(code: np.ndarray) -> int:
    """How many rows of these category codes are GPU activity."""
    return int(np.isin(code, GPU_CODES).sum())


def build_table(rows: list[KinetoEvent], code: np.ndarray, ts: np.ndarray,
                dur: np.ndarray) -> pd.DataFrame:
    """Columns of the event table, one C-level pass per column over the rows that carry it.

    `code`, `ts`, `dur`: the category code, start and duration columns, already validated.
    """
    n = len(rows)
    args = [e.args or NO_ARGS for e in rows]
    cats = pd.Categorical.from_codes(cast("npt.NDArray[np.integer[Any]]", code),
                                     categories=pd.Index(ALL_CATEGORIES))

    def rows_of(*names: str) -> np.ndarray:
        return np.flatnonzero(np.isin(code, [CAT_CODE[c] for c in names]))

    gpu, ops = rows_of(*GPU_CATEGORIES), rows_of("cpu_op")
    linked = rows_of(*GPU_CATEGORIES, "cuda_runtime", "cuda_driver")
    gpu_args, op_args = pick_column(args, gpu), pick_column(args, ops)
    df = pd.DataFrame({
        "cat": cats, "name": _categorical(map(attrgetter("name"), rows), n),
        "ts_us": ts, "dur_us": dur, "pid": id_column(rows, "pid"), "tid": id_column(rows, "tid"),
        "device": sparse_column(n, gpu, gpu_args, "device"),
        "stream": sparse_column(n, gpu, gpu_args, "stream"),
        "correlation": sparse_column(n, linked, pick_column(args, linked), "correlation"),
        "external_id": np.maximum(event_column(args, "external_id"),
                                  event_column(args, "external_id_old")),
        "bytes": sparse_column(n, gpu, gpu_args, "nbytes"),
        # shapes and dtypes of cpu ops as JSON text ("" elsewhere)
        "input_dims": _json_column(op_args, "input_dims", ops, n),
        "input_types": _json_column(op_args, "input_type", ops, n),
        # kernels' launch grid and block as JSON text ("[80,1,1]"), CUPTI's occupancy (-1: none)
        "grid": _json_column(gpu_args, "grid", gpu, n),
        "block": _json_column(gpu_args, "block", gpu, n),
        "occupancy_pct": sparse_float_column(n, gpu, gpu_args, "occupancy_pct"),
        "end_us": ts + dur,
    })
    return order_table(df)


def order_table(df: pd.DataFrame) -> pd.DataFrame:
    """By category, then time: `Trace.of()` then slices instead of copying."""
    order = np.lexsort((df["ts_us"].to_numpy(), np.asarray(df["cat"].cat.codes)))
    return df.take(order).reset_index(drop=True)
