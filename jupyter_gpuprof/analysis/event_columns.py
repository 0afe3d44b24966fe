"""The event table's columns grown piece by piece from decoded events, so a streamed trace never
holds more than one piece of event structs; names and JSON texts interned once as int codes.

The result is the table `event_table.build_table` makes from the whole list: the same rows,
values, category order and dtypes (categories in order of first appearance among kept rows).
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from itertools import compress
from operator import attrgetter
from typing import Any

import numpy as np
import pandas as pd

from . import trace_formats as formats
from .event_table import (
    ALL_CATEGORIES,
    CAT_CODE,
    GPU_CODES,
    MEMORY_COLUMNS,
    event_column,
    id_column,
    order_table,
    pick_column,
    sparse_column,
    sparse_float_column,
)
from .kineto_json import (
    KEPT_CATEGORIES,
    MEMORY_DEVICE_TYPE_CUDA,
    NO_ARGS,
    KinetoEvent,
    thread_names,
)
from .trace_validate import Drops, valid_times

#: JSON-text columns: table column -> (args field, the rows that carry it)
_JSON_COLUMNS = {"input_dims": ("input_dims", "ops"), "input_types": ("input_type", "ops"),
                 "grid": ("grid", "gpu"), "block": ("block", "gpu")}
_OP_CODE = CAT_CODE["cpu_op"]
#: (ph, name) of an allocator instant, of a thread's name
_MEMORY, _THREAD_NAME = {("i", "[memory]")}, {("M", "thread_name")}
#: categories counted into `TraceInfo.held`
_HELD = (*formats.FOREIGN_CATEGORIES, "cuda_runtime")
_LINKED_CODES = [*GPU_CODES, CAT_CODE["cuda_runtime"], CAT_CODE["cuda_driver"]]


class _Interned:
    """Values -> codes in order of first sight (each code the position it was first seen at,
    so codes grow with first appearance), across pieces."""

    def __init__(self, *first: Any) -> None:
        self.seen: dict[Any, int] = {}
        self.count = itertools.count()
        for value in first:
            self.seen[value] = next(self.count)

    def codes(self, values: Any, n: int) -> np.ndarray:
        return np.fromiter(map(self.seen.setdefault, values, self.count), np.int64, count=n)

    def categorical(self, codes: np.ndarray, keep_first: bool, text: Any = str
                    ) -> pd.Categorical:
        """A categorical of the rows' values, its categories in order of first appearance
        (the first interned value always first with `keep_first`: "" of the JSON columns)."""
        known = np.fromiter(self.seen.values(), np.int64, count=len(self.seen))
        values = list(self.seen)
        used, first_row = np.unique(codes, return_index=True)
        if keep_first:
            keep = used != known[0]
            used, first_row = np.concatenate([known[:1], used[keep]]), np.concatenate(
                [[-1], first_row[keep]])
        order = np.argsort(first_row, kind="stable")
        dense = np.empty(len(used), dtype=np.int32)
        dense[order] = np.arange(len(used), dtype=np.int32)
        cats = pd.Index([text(values[i]) for i in np.searchsorted(known, used[order])],
                        dtype=object)
        return pd.Categorical.from_codes(dense[np.searchsorted(used, codes)], categories=cats)


class EventColumns:
    """The event table's and the allocator table's columns, appended piece by piece."""

    def __init__(self, keep_python: bool) -> None:
        self._kept = {("X", c) for c in (KEPT_CATEGORIES if keep_python
                                         else KEPT_CATEGORIES[:-1])}
        self.n_total = 0
        self.thread_names: dict[tuple[str, str], str] = {}
        self.held: Counter[str] = Counter()
        self._parts: dict[str, list[np.ndarray]] = defaultdict(list)
        self._mem: dict[str, list[np.ndarray]] = defaultdict(list)
        self._names = _Interned()
        self._json = {col: _Interned(b"") for col in _JSON_COLUMNS}

    def add(self, events: list[KinetoEvent]) -> None:
        """Take one piece's events (normalised in place, then dropped by the caller): what
        `kineto_json.select`, `thread_names` and `foreign_counts` pick, in passes kept in C."""
        self.n_total += len(events)
        cats = Counter(map(attrgetter("cat"), events))
        if not cats.keys().isdisjoint(formats.CATEGORY_ALIASES):
            formats.normalise_categories(events)
            cats = Counter(map(attrgetter("cat"), events))
        self.held.update({c: cats[c] for c in _HELD if c in cats})
        evs = list(compress(events, map(self._kept.__contains__,
                                        map(attrgetter("ph", "cat"), events))))
        ph_name = list(map(attrgetter("ph", "name"), events))
        mems = [e for e in compress(events, map(_MEMORY.__contains__, ph_name))
                if e.args is not None]
        self.thread_names.update(thread_names(list(compress(
            events, map(_THREAD_NAME.__contains__, ph_name)))))
        if evs:
            self._add_events(evs)
        if mems:
            self._add_memory(mems)

    def _add_events(self, rows: list[KinetoEvent]) -> None:
        n = len(rows)
        args = [e.args or NO_ARGS for e in rows]
        code = np.fromiter(map(CAT_CODE.__getitem__, map(attrgetter("cat"), rows)), np.int8,
                           count=n)
        gpu = np.flatnonzero(np.isin(code, GPU_CODES))
        where = {"gpu": gpu, "ops": np.flatnonzero(code == _OP_CODE)}
        linked = np.flatnonzero(np.isin(code, _LINKED_CODES))
        gpu_args = pick_column(args, gpu)
        picked = {"gpu": gpu_args, "ops": pick_column(args, where["ops"])}
        part = self._parts
        part["code"].append(code)
        part["ts"].append(event_column(rows, "ts", np.float64))
        part["dur"].append(event_column(rows, "dur", np.float64))
        part["name"].append(self._names.codes(map(attrgetter("name"), rows), n))
        part["pid"].append(id_column(rows, "pid"))
        part["tid"].append(id_column(rows, "tid"))
        part["device"].append(sparse_column(n, gpu, gpu_args, "device"))
        part["stream"].append(sparse_column(n, gpu, gpu_args, "stream"))
        part["correlation"].append(
            sparse_column(n, linked, pick_column(args, linked), "correlation"))
        part["external_id"].append(np.maximum(event_column(args, "external_id"),
                                              event_column(args, "external_id_old")))
        part["bytes"].append(sparse_column(n, gpu, gpu_args, "nbytes"))
        part["occupancy_pct"].append(sparse_float_column(n, gpu, gpu_args, "occupancy_pct"))
        for col, (attr, rows_of) in _JSON_COLUMNS.items():
            codes = np.zeros(n, dtype=np.int64)
            items = picked[rows_of]
            codes[where[rows_of]] = self._json[col].codes(
                map(bytes, map(attrgetter(attr), items)), len(items))
            part[col].append(codes)

    def _add_memory(self, mems: list[KinetoEvent]) -> None:
        args = [e.args or NO_ARGS for e in mems]
        self._mem["ts"].append(event_column(mems, "ts", np.float64))
        for attr in ("device_type", "device_id", "mem_bytes", "total_allocated"):
            self._mem[attr].append(event_column(args, attr))

    def _column(self, parts: dict[str, list[np.ndarray]], name: str, dtype: Any) -> np.ndarray:
        """One column, its pieces joined (and their memory given back)."""
        pieces = parts.pop(name, [])
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)

    def valid_events(self, drops: Drops) -> dict[str, np.ndarray]:
        """The event columns of the rows with valid times (the others counted into `drops`)."""
        code = self._column(self._parts, "code", np.int8)
        ts = self._column(self._parts, "ts", np.float64)
        dur = self._column(self._parts, "dur", np.float64)
        ok = valid_times(ts, dur, np.isin(code, GPU_CODES), drops)
        cols = {"code": code, "ts": ts, "dur": dur}
        for name in list(self._parts):
            cols[name] = self._column(self._parts, name, np.int64)
        if not ok.all():
            cols = {k: v[ok] for k, v in cols.items()}
        return cols

    def valid_memory(self, drops: Drops) -> dict[str, np.ndarray]:
        """The allocator columns of the instants with a valid time."""
        ts = self._column(self._mem, "ts", np.float64)
        ok = valid_times(ts, None, np.zeros(len(ts), dtype=bool), drops)
        cols = {"ts": ts}
        for name in ("device_type", "device_id", "mem_bytes", "total_allocated"):
            cols[name] = self._column(self._mem, name, np.int64)
        return {k: v[ok] for k, v in cols.items()}

    def table(self, cols: dict[str, np.ndarray]) -> pd.DataFrame:
        """The event table (`event_table.build_table`'s columns, laid out by category, time)."""
        empty = np.zeros(0, dtype=np.int64)
        cats = pd.Categorical.from_codes(cols["code"], categories=pd.Index(ALL_CATEGORIES))
        ts, dur = cols["ts"], cols["dur"]

        def ints(name: str) -> np.ndarray:
            return cols.get(name, empty)  # absent when no piece held an event

        df = pd.DataFrame({
            "cat": cats,
            "name": self._names.categorical(ints("name"), keep_first=False),
            "ts_us": ts, "dur_us": dur, "pid": ints("pid"), "tid": ints("tid"),
            "device": ints("device"), "stream": ints("stream"),
            "correlation": ints("correlation"), "external_id": ints("external_id"),
            "bytes": ints("bytes"),
            **{col: self._json[col].categorical(ints(col), keep_first=True,
                                                text=bytes.decode)
               for col in ("input_dims", "input_types", "grid", "block")},
            "occupancy_pct": cols.get("occupancy_pct", np.zeros(0)),
            "end_us": ts + dur,
        })
        return order_table(df)

    def memory(self, cols: dict[str, np.ndarray]) -> pd.DataFrame:
        """The allocator instants' table (`event_table.memory_events`'s columns)."""
        on_gpu = cols["device_type"] == MEMORY_DEVICE_TYPE_CUDA
        return pd.DataFrame({
            "ts_us": cols["ts"], "device": np.where(on_gpu, cols["device_id"], -1),
            "bytes": cols["mem_bytes"], "total_allocated": cols["total_allocated"],
        }, columns=list(MEMORY_COLUMNS))
