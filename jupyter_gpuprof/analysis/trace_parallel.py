"""Decode one large trace in several processes: split the event array, build tables, merge.

JSON decoding and column building are CPU-bound and single-threaded; a 300 MB trace spends
most of its load time there. The event array is cut at event boundaries, each part decoded
and tabled in a forked worker, and the parts' categoricals unioned. Any surprise in the file's
layout returns None and the caller decodes in one process instead.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import msgspec
import pandas as pd
from pandas.api.types import union_categoricals

from .trace import TraceInfo, _Event, _File, build_table, order_table, select, trace_info

#: below this size one process is faster than forking workers
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
_DATA: bytes = b""  # the decompressed file, inherited by forked workers (never pickled)


def _bounds(data: bytes) -> tuple[int, int] | None:
    """Byte offsets just inside the '[' and ']' of the traceEvents array."""
    key = data.find(b'"traceEvents"')
    if key < 0:
        return None
    lo = data.find(b"[", key)
    hi = data.rfind(b"]")
    return (lo + 1, hi) if 0 <= lo < hi else None


def _cuts(data: bytes, lo: int, hi: int, parts: int) -> list[int]:
    """Split points at event boundaries (a '},' followed by the next event's '{')."""
    cuts = [lo]
    for k in range(1, parts):
        pos = lo + (hi - lo) * k // parts
        while True:
            pos = data.find(b"},", pos, hi)
            if pos < 0:
                return cuts + [hi]
            nxt = pos + 2
            while nxt < hi and data[nxt] in b" \t\r\n":
                nxt += 1
            if nxt < hi and data[nxt] == ord("{"):
                cuts.append(pos + 1)  # after the '}', before the ','
                break
            pos += 2
    return cuts + [hi]


def _decode_part(span: tuple[int, int, bool]) -> tuple[pd.DataFrame, int]:
    lo, hi, keep_python = span
    body = _DATA[lo:hi].strip().strip(b",")
    events = msgspec.json.decode(b"[" + body + b"]", type=list[_Event])
    evs, mems = select(events, keep_python)
    return build_table(evs, mems), len(events)


def _merge(frames: list[pd.DataFrame]) -> pd.DataFrame:
    names = union_categoricals([f["name"].array for f in frames])
    df = pd.concat([f.drop(columns=["name"]) for f in frames], ignore_index=True)
    df.insert(1, "name", names)
    return order_table(df)


def decode_parallel(data: bytes, path: Path, workers: int,
                    keep_python: bool) -> tuple[pd.DataFrame, TraceInfo] | None:
    """Events table and info, or None when the file is small or not laid out as expected."""
    global _DATA
    bounds = _bounds(data) if len(data) >= PARALLEL_MIN_BYTES else None
    if bounds is None or "fork" not in multiprocessing.get_all_start_methods():
        return None
    lo, hi = bounds
    try:
        header = msgspec.json.decode(data[: lo - 1] + b"[]" + data[hi + 1:], type=_File)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    cuts = _cuts(data, lo, hi, workers)
    spans = [(a, b, keep_python) for a, b in zip(cuts, cuts[1:])]
    _DATA = data
    try:
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=len(spans), mp_context=ctx) as pool:
            results = list(pool.map(_decode_part, spans))
    except (msgspec.DecodeError, msgspec.ValidationError, OSError):
        return None
    finally:
        _DATA = b""
    frames = [f for f, _ in results]
    events = _merge(frames)
    n_total = sum(n for _, n in results)
    return events, trace_info(header, path, n_total, len(events))
