"""The event table's columns joined from the pieces' columns (`piece_columns`, decoded here or in
other processes), in file order; names and JSON texts interned once as int codes.

The result is the table `event_table.build_table` makes from the whole list: the same rows,
values, category order and dtypes (categories in order of first appearance among kept rows).
The table is laid out in one copy: each joined column is put in table order and freed before
the next is joined, so the peak is the table plus one column, not three tables.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pandas as pd

from .allocator import give_back_freed
from .event_fields import ALL_CATEGORIES, GPU_CODES, MEMORY_COLUMNS
from .kineto_json import MEMORY_DEVICE_TYPE_CUDA, KinetoEvent
from .piece_columns import JSON_COLUMNS, PieceColumns, piece_columns
from .trace_validate import Drops, valid_times

#: integer columns of the event table, in its column order (after cat, name, ts_us, dur_us)
_INT_COLUMNS = ("pid", "tid", "device", "stream", "correlation", "external_id", "bytes")


class _Interned:
    """Values -> codes in order of first sight (each code the position it was first seen at,
    so codes grow with first appearance), across pieces."""

    def __init__(self, *first: Any) -> None:
        self.seen: dict[Any, int] = {}
        self.count = itertools.count()
        for value in first:
            self.seen[value] = next(self.count)

    def codes(self, values: list[Any]) -> np.ndarray:
        return np.fromiter(map(self.seen.setdefault, values, self.count), np.int64,
                           count=len(values))

    def categorical(self, codes: np.ndarray, order: np.ndarray, keep_first: bool,
                    text: Any = str) -> pd.Categorical:
        """A categorical of the rows' values taken in `order`, its categories in order of
        first appearance in file order (the first interned value always first with
        `keep_first`: "" of the JSON columns)."""
        known = np.fromiter(self.seen.values(), np.int64, count=len(self.seen))
        values = list(self.seen)
        used, first_row = np.unique(codes, return_index=True)
        if keep_first:
            keep = used != known[0]
            used, first_row = np.concatenate([known[:1], used[keep]]), np.concatenate(
                [[-1], first_row[keep]])
        by_first = np.argsort(first_row, kind="stable")
        dense = np.empty(len(used), dtype=np.int32)
        dense[by_first] = np.arange(len(used), dtype=np.int32)
        at = np.searchsorted(known, used[by_first])
        if text is str:  # names are str already: taken in C, not converted one by one
            held = np.empty(len(values), dtype=object)
            held[:] = values
            cats = pd.Index(held[at], dtype=object)
        else:
            cats = pd.Index(_decoded([values[i] for i in at], text), dtype=object)
        rows = dense[np.searchsorted(used, codes)]
        return pd.Categorical.from_codes(rows[order], categories=cats)


def _decoded(raws: list[bytes], text: Any) -> list[Any]:
    """`text` (bytes.decode) of each raw JSON text, in one decoding of the texts joined by a
    NUL (none occurs raw in JSON text); one by one where one holds a NUL or does not decode."""
    joined = b"\0".join(raws)
    if text is not bytes.decode or len(raws) < 2 or joined.count(b"\0") != len(raws) - 1:
        return [text(r) for r in raws]
    try:
        return joined.decode().split("\0")
    except UnicodeDecodeError:
        return [text(r) for r in raws]


class EventColumns:
    """The event table's and the allocator table's columns, joined piece by piece."""

    def __init__(self, keep_python: bool) -> None:
        self.keep_python = keep_python
        self.n_total = 0
        self.thread_names: dict[tuple[str, str], str] = {}
        self.held: Counter[str] = Counter()
        self._parts: dict[str, list[np.ndarray]] = defaultdict(list)
        self._mem: dict[str, list[np.ndarray]] = defaultdict(list)
        self._names = _Interned()
        self._json = {col: _Interned(b"") for col in JSON_COLUMNS}

    def add(self, events: list[KinetoEvent]) -> None:
        """Take one piece's events (normalised in place, then dropped by the caller)."""
        self.add_piece(piece_columns(events, self.keep_python))

    def add_piece(self, piece: PieceColumns) -> None:
        """Take one piece's columns, its local name and text codes made global."""
        self.n_total += piece.n_total
        self.held.update(piece.held)
        self.thread_names.update(piece.thread_names)
        cols = piece.events
        if cols:
            # int32: positions among all first sights, fewer than the events (`MAX_EVENTS`)
            cols["name"] = self._names.codes(piece.names).astype(np.int32)[cols["name"]]
            for col, texts in piece.texts.items():
                cols[col] = self._json[col].codes(texts).astype(np.int32)[cols[col]]
            for name, values in cols.items():
                self._parts[name].append(values)
        for name, values in piece.memory.items():
            self._mem[name].append(values)

    def _column(self, parts: dict[str, list[np.ndarray]], name: str, dtype: Any) -> np.ndarray:
        """One column, its pieces joined (and their memory given back)."""
        pieces = parts.pop(name, [])
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=dtype)

    def valid_events(self, drops: Drops) -> dict[str, np.ndarray]:
        """The category, ts and dur columns of the rows with valid times (the others counted
        into `drops`) and `ok`, which rows those are; the other columns stay in pieces until
        `table` joins them one at a time."""
        code = self._column(self._parts, "code", np.int8)
        ts = self._column(self._parts, "ts", np.float64)
        dur = self._column(self._parts, "dur", np.float64)
        ok = valid_times(ts, dur, np.isin(code, GPU_CODES), drops)
        if ok.all():
            return {"code": code, "ts": ts, "dur": dur}
        return {"code": code[ok], "ts": ts[ok], "dur": dur[ok], "ok": ok}

    def valid_memory(self, drops: Drops) -> dict[str, np.ndarray]:
        """The allocator columns of the instants with a valid time."""
        ts = self._column(self._mem, "ts", np.float64)
        ok = valid_times(ts, None, np.zeros(len(ts), dtype=bool), drops)
        cols = {"ts": ts}
        for name in ("device_type", "device_id", "mem_bytes", "total_allocated"):
            cols[name] = self._column(self._mem, name, np.int64)
        return {k: v[ok] for k, v in cols.items()}

    def table(self, cols: dict[str, np.ndarray]) -> pd.DataFrame:
        """The event table (`event_table.build_table`'s columns), laid out by category, then
        time (`event_table.order_table`), one column at a time."""
        code, ts, dur = cols.pop("code"), cols.pop("ts"), cols.pop("dur")
        ok = cols.pop("ok", None)
        order, n = np.lexsort((ts, code)), len(code)

        def joined(name: str, dtype: Any = np.int64) -> np.ndarray:
            """A column's pieces joined, its valid rows, in table order."""
            values = self._column(self._parts, name, dtype)
            if len(values) == 0:
                return np.zeros(n, dtype=dtype)  # no piece held an event
            return (values if ok is None else values[ok])[order]

        def coded(name: str, interned: _Interned, **kw: Any) -> pd.Categorical:
            values = self._column(self._parts, name, np.int64)
            if ok is not None:
                values = values[ok]
            return interned.categorical(values, order, **kw)

        data: dict[str, Any] = {
            "cat": pd.Categorical.from_codes(code[order], categories=pd.Index(ALL_CATEGORIES)),
            "name": coded("name", self._names, keep_first=False),
            "ts_us": ts[order], "dur_us": dur[order],
        }
        del code
        for name in _INT_COLUMNS:
            data[name] = joined(name)
            give_back_freed()  # the column's pieces, so the peak is the table plus one column
        for col in JSON_COLUMNS:
            data[col] = coded(col, self._json[col], keep_first=True, text=bytes.decode)
        data["occupancy_pct"] = joined("occupancy_pct", np.float64)
        give_back_freed()
        data["end_us"] = data["ts_us"] + data["dur_us"]
        return pd.DataFrame(data, copy=False)

    def memory(self, cols: dict[str, np.ndarray]) -> pd.DataFrame:
        """The allocator instants' table (`event_table.memory_events`'s columns)."""
        on_gpu = cols["device_type"] == MEMORY_DEVICE_TYPE_CUDA
        return pd.DataFrame({
            "ts_us": cols["ts"], "device": np.where(on_gpu, cols["device_id"], -1),
            "bytes": cols["mem_bytes"], "total_allocated": cols["total_allocated"],
        }, columns=list(MEMORY_COLUMNS))
