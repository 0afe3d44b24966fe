"""The one Kineto trace parser: JSON(.gz) -> a `Trace`, its event table plus device metadata.

The file is decoded into typed structs (`kineto_json`) and laid out as columns (`event_table`).
Unknown event kinds are skipped; a truncated or corrupt file raises `TraceError` with a one-line
message that names the file. Every kept event is validated (`trace_validate`): invalid ones are
dropped and counted into `TraceInfo.warnings`; then the whole trace (`trace_sanity`): duplicates
read once and said, an empty or clockless trace refused.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from . import piece_share
from . import trace_formats as formats
from . import trace_sanity as sanity
from . import trace_stream as stream_reader
from .event_columns import EventColumns
from .event_fields import MEMORY_COLUMNS
from .event_table import (
    build_table,
    memory_events,
    n_gpu_rows,
    valid_columns,
    valid_memory_events,
    valid_ts,
)
from .kineto_json import GPU_CATEGORIES, KinetoFile, decode, select, thread_names
from .piece_columns import decode_piece_columns
from .trace_validate import Drops, strip_bom
from .tracefile import MAX_EVENTS, Prefetch, TraceError, read_trace_bytes, too_many_events

__all__ = ["Trace", "TraceError", "TraceInfo", "load_trace"]

#: more ranks than any job runs: a larger rank or world size in a header is a broken field
MAX_RANKS = 2**20


@dataclass
class TraceInfo:
    """What the trace says about where it came from."""

    path: str
    #: the trace's deviceProperties, unchecked (`hardware.gpu_arch` reads the ones it needs)
    devices: list[dict[str, object]] = field(default_factory=list)
    rank: int | None = None
    world_size: int | None = None
    t0_us: float = 0.0
    cuda_runtime_version: int | None = None
    record_shapes: bool = False
    profile_memory: bool = False
    n_events_total: int = 0
    n_events_skipped: int = 0
    #: events of kept kinds dropped as invalid (their reasons are in `warnings`)
    n_events_dropped: int = 0
    #: what a reader of the report must know about this file ("12 events dropped: …")
    warnings: list[str] = field(default_factory=list)
    #: events of kinds not analysed that tell what the trace is (MTIA, range profiler)
    held: dict[str, int] = field(default_factory=dict)
    #: (pid, tid) as text -> the thread's own name ("thread_name" metadata), for lane labels
    thread_names: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def gpu_name(self) -> str | None:
        """Name of the first GPU the trace describes (None on a CPU-only trace)."""
        return str(self.devices[0].get("name")) if self.devices else None


@dataclass
class Trace:
    """A parsed trace: the event table (see docs/architecture.md) and its `TraceInfo`."""

    events: pd.DataFrame
    info: TraceInfo
    #: allocator events (profile_memory): ts_us, device (-1 for host memory), bytes (the
    #: allocation's change), total_allocated (after it); kept apart from the event table
    memory: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=MEMORY_COLUMNS))
    #: each multi-category subset's rows in time order (positions in `events`): the subset's
    #: frame is a copy, held only while an analysis holds it (`_subsets` is weak)
    _rows: dict[tuple[str, ...], np.ndarray] = field(default_factory=dict, repr=False)
    _subsets: weakref.WeakValueDictionary[tuple[str, ...], pd.DataFrame] = field(
        default_factory=weakref.WeakValueDictionary, repr=False)

    def of(self, *cats: str, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """Rows of the given categories, in time order; `columns`: only those columns.

        The table is laid out by category, then time, so one category is a slice, not a copy.
        Several categories' rows are a copy, in one take: it is not kept once no analysis holds
        it (on a 4 GB trace each such copy is hundreds of MB), and with `columns` it holds just
        those, so a pass that reads four columns never copies seventeen.
        """
        spans = self._spans(cats)
        if len(spans) <= 1:  # one category's rows: a slice, not a copy
            lo, hi = spans[0] if spans else (0, 0)
            out = self.events.iloc[lo:hi]
            return out if columns is None else out[list(columns)]
        if cats not in self._rows:  # their rows merged in time order
            rows = np.concatenate([np.arange(lo, hi) for lo, hi in spans])
            ts = self.events["ts_us"].to_numpy()[rows]
            self._rows[cats] = rows[np.argsort(ts, kind="stable")]
        rows = self._rows[cats]
        if columns is not None:
            return self.events[list(columns)].take(rows)
        held = self._subsets.get(cats)
        if held is None:
            held = self._subsets[cats] = self.events.take(rows)
        return held

    def _spans(self, cats: tuple[str, ...]) -> list[tuple[int, int]]:
        """The row ranges of the categories present (a handful of categories)."""
        cat = self.events["cat"]
        codes = cat.cat.codes.to_numpy()
        known = list(cat.cat.categories)
        found = (np.searchsorted(codes, [code, code + 1])
                 for code in (known.index(c) for c in cats if c in known))
        return [(int(lo), int(hi)) for lo, hi in found if hi > lo]

    @property
    def has_gpu(self) -> bool:
        """Whether any GPU activity was recorded."""
        return bool(self.events["cat"].isin(GPU_CATEGORIES).any())


def trace_info(file: KinetoFile, path: Path, n_total: int, n_kept: int,
               warnings: list[str], threads: dict[tuple[str, str], str]) -> TraceInfo:
    """TraceInfo from a decoded file's header fields (what is wrong with them said in
    `warnings`)."""
    info = TraceInfo(
        path=str(path), devices=sanity.valid_devices(file.deviceProperties, warnings),
        cuda_runtime_version=file.cuda_runtime_version,
        record_shapes=bool(file.record_shapes), profile_memory=bool(file.profile_memory),
        n_events_total=n_total, n_events_skipped=n_total - n_kept,
        thread_names=threads,
    )
    dist = file.distributedInfo or {}
    if isinstance(rank := dist.get("rank"), int) and 0 <= rank < MAX_RANKS:
        info.rank = rank
    if isinstance(world_size := dist.get("world_size"), int) and 0 < world_size <= MAX_RANKS:
        info.world_size = world_size
    return info


def load_trace(path: str | Path, *, keep_python: bool = False,
               data: Prefetch | piece_share.PieceShare | None = None) -> Trace:
    """Parse one Kineto trace file (`.json` or `.json.gz`) into a `Trace`.

    Read as a stream of pieces (`trace_stream`) when laid out as the profiler writes it, else
    whole. `data`: the file already being read in the background (`tracefile.Prefetch`), or
    decoded by forked processes as well (`piece_share.PieceShare`).
    """
    path = Path(path)
    share = data if isinstance(data, piece_share.PieceShare) else None
    if share is not None and share.keep_python != keep_python:
        share.close()  # decoding other events than asked: of no use
        share = data = None
    stream = data if data is not None else Prefetch(path)
    try:
        return _load_streamed(path, stream.chunks(), keep_python, share)
    except stream_reader.NotStreamable:
        pass
    finally:
        stream.close()
    return _load_whole(path, keep_python)


def _load_streamed(path: Path, chunks: Iterator[bytes | bytearray], keep_python: bool,
                   share: piece_share.PieceShare | None = None) -> Trace:
    """The trace decoded piece by piece into the table's columns (NotStreamable when it is not
    laid out as the profiler writes it: read it whole then); `share`: forked processes decoding
    pieces beside this one (`piece_share`)."""
    warnings: list[str] = []
    drops = Drops()
    columns = EventColumns(keep_python)
    pieces = stream_reader.split_events(chunks)
    header = stream_reader.decode_head(next(pieces))
    tail: list[bytes | bytearray] = []
    body = stream_reader.all_but_last(pieces, tail)
    decode = partial(decode_piece_columns, keep_python=keep_python)
    for piece in (share.columns(body, decode) if share is not None else map(decode, body)):
        columns.add_piece(piece)
        if columns.n_total > MAX_EVENTS:  # a piece at a time: the excess is never held
            raise too_many_events(path, columns.n_total, MAX_EVENTS)
    if share is not None:
        share.close()  # every piece is here: the decoders have nothing left to do
    last = stream_reader.decode_tail(tail[0] if tail else b"")
    columns.add(last.traceEvents)
    if columns.n_total > MAX_EVENTS:
        raise too_many_events(path, columns.n_total, MAX_EVENTS)
    header = stream_reader.merged_header(header, last)
    if not columns.n_total and header.schemaVersion is None and not header.deviceProperties:
        raise TraceError(f"{path}: no 'traceEvents': not a Kineto/Chrome trace")
    evs, mems = columns.valid_events(drops), columns.valid_memory(drops)
    n_kept = len(evs["code"]) + len(mems["ts"])
    drops.refuse_if_too_many(path, n_kept, n_gpu_rows(evs["code"]))
    sanity.refuse_if_empty(path, columns.n_total)
    info = trace_info(header, path, columns.n_total, n_kept, warnings, columns.thread_names)
    info.n_events_dropped = drops.total
    info.held = {c: n for c in (*formats.FOREIGN_CATEGORIES, "cuda_runtime")
                 if (n := columns.held[c])}
    sanity.check_clock(path, np.concatenate([evs["ts"], mems["ts"]]), warnings)
    events, memory = sanity.drop_duplicates(columns.table(evs), columns.memory(mems), warnings)
    return _finish(path, events, memory, info, warnings + drops.warnings())


def _load_whole(path: Path, keep_python: bool) -> Trace:
    """The trace decoded from its whole bytes: any layout, odd field types kept event by event,
    the decoder's own error messages."""
    warnings: list[str] = []
    drops = Drops()
    raw = formats.as_object_form(strip_bom(read_trace_bytes(path), warnings))
    try:
        file, n_total = decode(raw, path, keep_python, drops, warnings)
        del raw
        if not file.traceEvents and file.schemaVersion is None and not file.deviceProperties:
            raise TraceError(f"{path}: no 'traceEvents': not a Kineto/Chrome trace")
        evs, mems = select(file.traceEvents, keep_python)
        columns = valid_columns(evs, drops)
        evs = columns[0]
        mems = valid_memory_events(mems, drops)
        drops.refuse_if_too_many(path, len(evs) + len(mems), n_gpu_rows(columns[1]))
        sanity.refuse_if_empty(path, n_total)
        info = trace_info(file, path, n_total, len(evs) + len(mems), warnings,
                          thread_names(file.traceEvents))
    except RecursionError:
        raise sanity.nesting_error(path) from None
    info.n_events_dropped, info.held = drops.total, formats.foreign_counts(file.traceEvents)
    del file
    sanity.check_clock(path, np.concatenate([columns[2], valid_ts(mems)]), warnings)
    events, memory = sanity.drop_duplicates(build_table(*columns), memory_events(mems), warnings)
    return _finish(path, events, memory, info, warnings + drops.warnings())


def _finish(path: Path, events: pd.DataFrame, memory: pd.DataFrame, info: TraceInfo,
            warnings: list[str]) -> Trace:
    """Steps checked, times made relative to the first event."""
    sanity.check_step_order(path, events)
    info.warnings = warnings
    if len(events):
        info.t0_us = float(events["ts_us"].min())
        events["ts_us"] -= info.t0_us
        events["end_us"] -= info.t0_us
        memory["ts_us"] -= info.t0_us
    return Trace(events=events, info=info, memory=memory)
