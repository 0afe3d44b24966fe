"""Decoded events -> numpy columns: the per-attribute passes every reader shares, free of pandas.

A forked piece decoder (`piece_share`) imports only this, numpy and msgspec, so it starts
before this process has imported pandas and decodes while the analysis' imports run.
"""

from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import Any

import numpy as np

from . import trace_formats as formats
from .kineto_json import GPU_CATEGORIES, KEPT_CATEGORIES, KinetoEvent

#: every category of the event table, in its layout order
ALL_CATEGORIES = KEPT_CATEGORIES
#: columns of `Trace.memory`
MEMORY_COLUMNS = ("ts_us", "device", "bytes", "total_allocated")
CAT_CODE = {c: i for i, c in enumerate(ALL_CATEGORIES)}
GPU_CODES = [CAT_CODE[c] for c in GPU_CATEGORIES]


def _ints(values: Any, n: int) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64, count=n)


def event_column(items: list[Any], attr: str, dtype: Any = np.int64) -> np.ndarray:
    """One attribute of every item as a numpy column (attrgetter keeps the loop in C)."""
    return np.fromiter(map(attrgetter(attr), items), dtype=dtype, count=len(items))


def id_column(evs: list[KinetoEvent], attr: str) -> np.ndarray:
    """pid/tid column: ints, with -1 where a trace wrote a string label instead."""
    try:
        return event_column(evs, attr)
    except (TypeError, ValueError, OverflowError):  # string ids, or digits past int64
        return _ints((formats.int_label(getattr(e, attr)) for e in evs), len(evs))


def pick_column(items: list[Any], idx: np.ndarray) -> list[Any]:
    """items[i] for i in idx, in C."""
    if len(idx) == 0:
        return []
    if len(idx) == 1:
        return [items[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(items))


def sparse_column(n: int, idx: np.ndarray, items: list[Any], attr: str) -> np.ndarray:
    """A column that only some rows carry: their values at idx, -1 elsewhere."""
    col = np.full(n, -1, dtype=np.int64)
    try:
        col[idx] = event_column(items, attr)
    except (TypeError, ValueError, OverflowError):  # a string id ("0x1f", "stream 7", "9"*40)
        col[idx] = _ints((formats.int_label(getattr(i, attr)) for i in items), len(items))
    return col


def sparse_float_column(n: int, idx: np.ndarray, items: list[Any], attr: str) -> np.ndarray:
    """A float column that only some rows carry: their values at idx, -1 elsewhere."""
    col = np.full(n, -1.0, dtype=np.float64)
    col[idx] = event_column(items, attr, np.float64)
    return col
