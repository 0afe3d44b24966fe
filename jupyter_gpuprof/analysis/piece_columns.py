"""One piece of a streamed trace's events -> numpy columns, with its names coded locally.

This is the work a decoding process does on its own (`piece_share`): it needs no state from the
other pieces, and what it returns pickles as a few arrays and the piece's distinct names, so
`event_columns.EventColumns` joins pieces decoded anywhere, in file order.
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any

import numpy as np

from . import piece_skip
from . import trace_formats as formats
from . import trace_stream as stream_reader
from .event_fields import (
    CAT_CODE,
    GPU_CODES,
    event_column,
    id_column,
    pick_column,
    sparse_column,
    sparse_float_column,
)
from .kineto_json import KEPT_CATEGORIES, NO_ARGS, KinetoEvent, thread_names

#: JSON-text columns: table column -> (args field, the rows that carry it)
JSON_COLUMNS = {"input_dims": ("input_dims", "ops"), "input_types": ("input_type", "ops"),
                "grid": ("grid", "gpu"), "block": ("block", "gpu")}
_OP_CODE = CAT_CODE["cpu_op"]
#: categories counted into `TraceInfo.held`
HELD = (*formats.FOREIGN_CATEGORIES, "cuda_runtime")
_LINKED_CODES = [*GPU_CODES, CAT_CODE["cuda_runtime"], CAT_CODE["cuda_driver"]]
#: the categories kept in the table, without and with Python functions
_KEPT_CATS = {False: frozenset(KEPT_CATEGORIES[:-1]), True: frozenset(KEPT_CATEGORIES)}


@dataclass
class PieceColumns:
    """One piece's columns: event rows kept in file order, allocator instants, counts.

    `events["name"]` and the JSON columns hold codes into `names` / `texts[col]` (each list in
    order of first sight within the piece; a JSON column's first value is always b"").
    """

    n_total: int = 0
    held: dict[str, int] = field(default_factory=dict)
    thread_names: dict[tuple[str, str], str] = field(default_factory=dict)
    events: dict[str, np.ndarray] = field(default_factory=dict)
    memory: dict[str, np.ndarray] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    texts: dict[str, list[bytes]] = field(default_factory=dict)


def _local_codes(values: Any, n: int, first: tuple[Any, ...] = ()) -> tuple[np.ndarray, list[Any]]:
    """Dense int32 codes of the values, and the distinct values in order of first sight."""
    seen: dict[Any, int] = dict.fromkeys(first, 0)
    count = itertools.count(len(seen))
    at = np.fromiter(map(seen.setdefault, values, count), np.int64, count=n)
    firsts = np.fromiter(seen.values(), np.int64, count=len(seen))
    return np.searchsorted(firsts, at).astype(np.int32), list(seen)


def decode_piece_columns(piece: bytes | bytearray, keep_python: bool) -> PieceColumns:
    """A piece's bytes (`trace_stream.split_events`) decoded into its columns (NotStreamable
    when they do not decode as events)."""
    skipped = piece_skip.skipped_counts(piece, keep_python)
    if skipped is not None:  # no event read: only counted
        n, counts = skipped
        return PieceColumns(n_total=n, held={c: counts[c] for c in HELD if c in counts})
    out = piece_columns(stream_reader.decode_piece(piece), keep_python)  # events freed here
    out.names = compact(out.names, "\0")
    out.texts = {col: compact(texts, b"\0") for col, texts in out.texts.items()}
    return out


def compact(values: list[Any], sep: Any) -> list[Any]:
    """Equal copies of the values (str or bytes), made together once the piece's events are
    freed. The decoded ones lie among the events' objects: kept (a distinct name is interned
    for the whole read), they pin those memory pools, so every later piece's events are laid
    out in their holes, scattered, and each pass over them runs 2x slower (measured on 666 k
    distinct names). Kept as they are when a value holds `sep` (the split would cut it)."""
    if len(values) < 2:
        return values
    joined = sep.join(values)
    if joined.count(sep) != len(values) - 1:
        return values
    copies: list[Any] = joined.split(sep)
    return copies


def piece_columns(events: list[KinetoEvent], keep_python: bool) -> PieceColumns:
    """What `kineto_json.select`, `thread_names` and `foreign_counts` pick from the events, as
    columns (the events normalised in place), in passes kept in C."""
    out = PieceColumns(n_total=len(events))
    cats = list(map(attrgetter("cat"), events))
    counts = Counter(cats)  # hashes each category once; the passes below reuse the hash
    if not counts.keys().isdisjoint(formats.CATEGORY_ALIASES):
        formats.normalise_categories(events)
        cats = list(map(attrgetter("cat"), events))
        counts = Counter(cats)
    out.held = {c: counts[c] for c in HELD if c in counts}
    phs = list(map(attrgetter("ph"), events))
    # kept: a kept category, then "X" among those (no (ph, cat) tuple per event)
    of_kept = list(compress(events, map(_KEPT_CATS[keep_python].__contains__, cats)))
    evs = list(compress(of_kept, map("X".__eq__, map(attrgetter("ph"), of_kept))))
    instants = list(compress(events, map("i".__eq__, phs)))
    mems = list(compress(instants, map("[memory]".__eq__, map(attrgetter("name"), instants))))
    if None in map(attrgetter("args"), mems):
        mems = [e for e in mems if e.args is not None]
    out.thread_names = thread_names(list(compress(events, map("M".__eq__, phs))))
    if evs:
        _event_rows(out, evs)
    if mems:
        args = list(map(attrgetter("args"), mems))
        out.memory["ts"] = event_column(mems, "ts", np.float64)
        for attr in ("device_type", "device_id", "mem_bytes", "total_allocated"):
            out.memory[attr] = event_column(args, attr)
    return out


def _event_rows(out: PieceColumns, rows: list[KinetoEvent]) -> None:
    n = len(rows)
    args = [e.args or NO_ARGS for e in rows]
    code = np.fromiter(map(CAT_CODE.__getitem__, map(attrgetter("cat"), rows)), np.int8,
                       count=n)
    gpu = np.flatnonzero(np.isin(code, GPU_CODES))
    where = {"gpu": gpu, "ops": np.flatnonzero(code == _OP_CODE)}
    linked = np.flatnonzero(np.isin(code, _LINKED_CODES))
    gpu_args = pick_column(args, gpu)
    picked = {"gpu": gpu_args, "ops": pick_column(args, where["ops"])}
    cols = out.events
    cols["code"] = code
    cols["ts"] = event_column(rows, "ts", np.float64)
    cols["dur"] = event_column(rows, "dur", np.float64)
    cols["name"], out.names = _local_codes(map(attrgetter("name"), rows), n)
    cols["pid"] = id_column(rows, "pid")
    cols["tid"] = id_column(rows, "tid")
    cols["device"] = sparse_column(n, gpu, gpu_args, "device")
    cols["stream"] = sparse_column(n, gpu, gpu_args, "stream")
    cols["correlation"] = sparse_column(n, linked, pick_column(args, linked), "correlation")
    cols["external_id"] = np.maximum(event_column(args, "external_id"),
                                     event_column(args, "external_id_old"))
    cols["bytes"] = sparse_column(n, gpu, gpu_args, "nbytes")
    cols["occupancy_pct"] = sparse_float_column(n, gpu, gpu_args, "occupancy_pct")
    for col, (attr, rows_of) in JSON_COLUMNS.items():
        codes = np.zeros(n, dtype=np.int32)
        items = picked[rows_of]
        codes[where[rows_of]], out.texts[col] = _local_codes(
            map(bytes, map(attrgetter(attr), items)), len(items), first=(b"",))
        cols[col] = codes
