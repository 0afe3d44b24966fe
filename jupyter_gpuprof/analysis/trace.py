"""The one Kineto trace parser: JSON(.gz) -> a columnar event table plus device metadata.

Decoding goes straight into typed structs that hold only the fields the analyses use
(msgspec), which is what makes a 300 MB trace load in seconds with a fraction of the memory
that dict-based loaders need. Unknown event kinds are skipped; a truncated or corrupt file
raises `TraceError` with a one-line message that names the file. Every kept event is validated
(`trace_validate`): invalid ones are dropped and counted into `TraceInfo.warnings`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import msgspec
import numpy as np
import pandas as pd

if TYPE_CHECKING:
    import numpy.typing as npt

from . import trace_formats as formats
from .name_masks import names_where
from .trace_validate import (
    Drops,
    decode_error,
    decode_events_one_by_one,
    strip_bom,
    valid_times,
)
from .tracefile import Prefetch, TraceError, read_trace_bytes

__all__ = ["Trace", "TraceError", "TraceInfo", "load_trace", "names_where"]

#: categories kept in the event table (allocator instants go to `Trace.memory` instead)
KEPT_CATEGORIES = (
    "cpu_op",
    "user_annotation",
    "gpu_user_annotation",
    "cuda_runtime",
    "cuda_driver",
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "python_function",
)
#: every category of the event table, in its layout order
ALL_CATEGORIES = KEPT_CATEGORIES
#: columns of `Trace.memory`
MEMORY_COLUMNS = ("ts_us", "device", "bytes", "total_allocated")
_CAT_CODE = {c: i for i, c in enumerate(ALL_CATEGORIES)}
#: categories that occupy a GPU stream
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
_GPU_CODES = [_CAT_CODE[c] for c in GPU_CATEGORIES]
MEMORY_DEVICE_TYPE_CUDA = 1


class _Args(msgspec.Struct, gc=False):
    external_id: int = msgspec.field(default=-1, name="External id")
    external_id_old: int = msgspec.field(default=-1, name="external id")  # torch <= 1.9 GPU rows
    correlation: int = -1
    stream: int | str = -1  # ROCm writes "0x0" on runtime calls
    device: int = -1
    nbytes: int | str = msgspec.field(default=-1, name="bytes")  # ROCm runtime calls: "1"
    mem_bytes: int = msgspec.field(default=0, name="Bytes")
    total_allocated: int = msgspec.field(default=-1, name="Total Allocated")
    device_type: int = msgspec.field(default=-1, name="Device Type")
    device_id: int = msgspec.field(default=-1, name="Device Id")
    input_dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input Dims")
    input_type: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input type")


class _Event(msgspec.Struct, gc=False):
    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: int | str = -1
    tid: int | str = -1
    # NaN marks a missing time, which validation drops (0.0 would pass for a real value)
    ts: float = math.nan
    dur: float = math.nan
    args: _Args | None = None


class _Header(msgspec.Struct, gc=False):
    # the profiler's own fields, as it wrote them: each reader checks the ones it uses
    deviceProperties: list[dict[str, object]] = []
    distributedInfo: dict[str, object] | None = None
    schemaVersion: int | None = None
    cuda_runtime_version: int | None = None
    cuda_driver_version: int | None = None
    record_shapes: int | None = None
    profile_memory: int | None = None
    baseTimeNanoseconds: int | None = None


class _File(_Header):
    traceEvents: list[_Event] = []


class _RawFile(_Header):
    """The slow path's view: each event's JSON kept undecoded, to be decoded one by one."""

    traceEvents: list[msgspec.Raw] = []


class _RawEvents(msgspec.Struct, gc=False):
    """The slower path's view, for a header with wrongly typed fields: events only."""

    traceEvents: list[msgspec.Raw] = []


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
    _subsets: dict[tuple[str, ...], pd.DataFrame] = field(default_factory=dict, repr=False)

    def of(self, *cats: str) -> pd.DataFrame:
        """Rows of the given categories, in time order (cached: analyses ask repeatedly).

        The table is laid out by category, then time, so one category is a slice, not a copy.
        """
        if cats not in self._subsets:
            cat = self.events["cat"]
            codes = cat.cat.codes.to_numpy()
            parts = []
            for c in cats:
                if c in cat.cat.categories:
                    code = list(cat.cat.categories).index(c)  # a handful of categories
                    lo, hi = np.searchsorted(codes, [code, code + 1])
                    parts.append(self.events.iloc[lo:hi])
            out = (self.events.iloc[0:0] if not parts else parts[0] if len(parts) == 1
                   else pd.concat(parts).sort_values("ts_us", kind="stable"))
            self._subsets[cats] = out
        return self._subsets[cats]

    @property
    def has_gpu(self) -> bool:
        """Whether any GPU activity was recorded."""
        return bool(self.events["cat"].isin(GPU_CATEGORIES).any())


def _decode(data: bytes | memoryview, path: Path, keep_python: bool, drops: Drops,
            warnings: list[str]) -> tuple[_File, int]:
    """The decoded file and how many events it held; typed in one pass when every field is."""
    try:
        file = msgspec.json.decode(data, type=_File)
        return file, len(file.traceEvents)
    except msgspec.ValidationError:
        return _decode_tolerant(data, path, keep_python, drops, warnings)
    except msgspec.DecodeError as exc:
        raise decode_error(exc, data, path) from None


def _decode_tolerant(data: bytes | memoryview, path: Path, keep_python: bool, drops: Drops,
                     warnings: list[str]) -> tuple[_File, int]:
    """Slow path for files with odd field types: decode event by event, dropping bad ones."""
    try:
        raw: _RawFile | _RawEvents = msgspec.json.decode(data, type=_RawFile)
    except msgspec.ValidationError:
        try:
            raw = msgspec.json.decode(data, type=_RawEvents)
        except msgspec.ValidationError:
            raise TraceError(
                f"{path}: no 'traceEvents' list: not a Kineto/Chrome trace") from None
        warnings.append("header fields of the wrong type ignored (device properties, rank)")
    kept = set(KEPT_CATEGORIES if keep_python else KEPT_CATEGORIES[:-1])
    kept |= {old for old, new in formats.CATEGORY_ALIASES.items() if new in kept}

    def matters(ph: Any, cat: Any, name: Any) -> bool:
        return (ph == "X" and cat in kept) or (ph == "i" and name == "[memory]")

    events = decode_events_one_by_one(raw.traceEvents, _Event, matters, drops, GPU_CATEGORIES)
    header = {f: getattr(raw, f) for f in _Header.__struct_fields__} if isinstance(
        raw, _RawFile) else {}
    return _File(**header, traceEvents=events), len(raw.traceEvents)


def select(events: list[_Event], keep_python: bool = False) -> tuple[list[_Event], list[_Event]]:
    """The complete events of kept categories, and the allocator ([memory]) instants."""
    kept = set(KEPT_CATEGORIES if keep_python else KEPT_CATEGORIES[:-1])
    formats.normalise_categories(events)
    evs = [e for e in events if e.ph == "X" and e.cat in kept]
    mems = [e for e in events if e.ph == "i" and e.name == "[memory]" and e.args is not None]
    return evs, mems


def trace_info(file: _File, path: Path, n_total: int, n_kept: int) -> TraceInfo:
    """TraceInfo from a decoded file's header fields."""
    info = TraceInfo(
        path=str(path), devices=list(file.deviceProperties),
        cuda_runtime_version=file.cuda_runtime_version,
        record_shapes=bool(file.record_shapes), profile_memory=bool(file.profile_memory),
        n_events_total=n_total, n_events_skipped=n_total - n_kept,
    )
    dist = file.distributedInfo or {}
    if isinstance(rank := dist.get("rank"), int):
        info.rank = rank
    if isinstance(world_size := dist.get("world_size"), int):
        info.world_size = world_size
    return info


def load_trace(path: str | Path, *, keep_python: bool = False,
               data: Prefetch | None = None) -> Trace:
    """Parse one Kineto trace file (`.json` or `.json.gz`) into a `Trace`.

    `data`: the file already being read in the background (see `tracefile.Prefetch`).
    """
    path = Path(path)
    warnings: list[str] = []
    drops = Drops()
    raw = formats.as_object_form(strip_bom(read_trace_bytes(path) if data is None else data.take(),
                                   warnings))
    file, n_total = _decode(raw, path, keep_python, drops, warnings)
    del raw
    if not file.traceEvents and file.schemaVersion is None and not file.deviceProperties:
        raise TraceError(f"{path}: no 'traceEvents': not a Kineto/Chrome trace")
    evs, mems = select(file.traceEvents, keep_python)
    columns = _valid_columns(evs, drops)
    evs = columns[0]
    no_gpu = np.zeros(len(mems), dtype=bool)
    mems = _pick(mems, np.flatnonzero(valid_times(_col(mems, "ts", np.float64), None, no_gpu,
                                                  drops)))
    drops.refuse_if_too_many(path, len(evs) + len(mems), int(np.isin(columns[1], _GPU_CODES).sum()))
    info = trace_info(file, path, n_total, len(evs) + len(mems))
    info.n_events_dropped, info.held = drops.total, formats.foreign_counts(file.traceEvents)
    info.warnings = warnings + drops.warnings()
    del file
    events, memory = build_table(*columns), memory_events(mems)
    if len(events):
        info.t0_us = float(events["ts_us"].min())
        events["ts_us"] -= info.t0_us
        events["end_us"] -= info.t0_us
        memory["ts_us"] -= info.t0_us
    return Trace(events=events, info=info, memory=memory)


_NO_ARGS = _Args()


def _ints(values: Any, n: int) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64, count=n)


def _col(items: list[Any], attr: str, dtype: Any = np.int64) -> np.ndarray:
    """One attribute of every item as a numpy column (attrgetter keeps the loop in C)."""
    return np.fromiter(map(attrgetter(attr), items), dtype=dtype, count=len(items))


def _ids(evs: list[_Event], attr: str) -> np.ndarray:
    """pid/tid column: ints, with -1 where a trace wrote a string label instead."""
    try:
        return _col(evs, attr)
    except (TypeError, ValueError):
        return _ints((formats.int_label(getattr(e, attr)) for e in evs), len(evs))


def _categorical(values: Iterable[str], n: int) -> pd.Categorical:
    """Categorical column from repeated strings, coded through one dict pass in C."""
    seen: dict[str, int] = {}
    first = np.fromiter(map(seen.setdefault, values, itertools.count()), np.int64, count=n)
    # each name's code is the position where it first appeared; make them dense
    codes = np.searchsorted(np.fromiter(seen.values(), np.int64, count=len(seen)), first)
    return pd.Categorical.from_codes(codes.astype(np.int32),
                                     categories=pd.Index(list(seen), dtype=object))


def _json_column(args: list[_Args], attr: str, rows: np.ndarray, n: int) -> pd.Categorical:
    """A categorical of the raw JSON text of one args field ("" where absent), decoded once per
    distinct value: shapes and dtypes repeat across thousands of op calls."""
    seen: dict[bytes, int] = {b"": 0}
    first = np.zeros(n, dtype=np.int64)
    first[rows] = np.fromiter(map(seen.setdefault, map(bytes, map(attrgetter(attr), args)),
                                  itertools.count(1)), np.int64, count=len(rows))
    codes = np.searchsorted(np.fromiter(seen.values(), np.int64, count=len(seen)), first)
    texts = pd.Index([raw.decode() for raw in seen], dtype=object)
    return pd.Categorical.from_codes(codes.astype(np.int32), categories=texts)


def _pick(items: list[Any], idx: np.ndarray) -> list[Any]:
    """items[i] for i in idx, in C."""
    if len(idx) == 0:
        return []
    if len(idx) == 1:
        return [items[int(idx[0])]]
    return list(itemgetter(*idx.tolist())(items))


def _sparse(n: int, idx: np.ndarray, items: list[Any], attr: str) -> np.ndarray:
    """A column that only some rows carry: their values at idx, -1 elsewhere."""
    col = np.full(n, -1, dtype=np.int64)
    try:
        col[idx] = _col(items, attr)
    except (TypeError, ValueError):  # a string id ("0x1f", "stream 7") somewhere
        col[idx] = _ints((formats.int_label(getattr(i, attr)) for i in items), len(items))
    return col


def memory_events(mems: list[_Event]) -> pd.DataFrame:
    """The allocator instants as their own small table (columns `MEMORY_COLUMNS`)."""
    args = [e.args or _NO_ARGS for e in mems]
    on_gpu = _col(args, "device_type") == MEMORY_DEVICE_TYPE_CUDA
    return pd.DataFrame({
        "ts_us": _col(mems, "ts", np.float64),
        "device": np.where(on_gpu, _col(args, "device_id"), -1),
        "bytes": _col(args, "mem_bytes"), "total_allocated": _col(args, "total_allocated"),
    }, columns=list(MEMORY_COLUMNS))


def _valid_columns(rows: list[_Event], drops: Drops
                   ) -> tuple[list[_Event], np.ndarray, np.ndarray, np.ndarray]:
    """The rows with valid times and their category code, ts and dur columns (numpy checks)."""
    code = np.fromiter(map(_CAT_CODE.__getitem__, map(attrgetter("cat"), rows)), np.int8,
                       count=len(rows))
    ts, dur = _col(rows, "ts", np.float64), _col(rows, "dur", np.float64)
    ok = valid_times(ts, dur, np.isin(code, _GPU_CODES), drops)
    if ok.all():
        return rows, code, ts, dur
    return _pick(rows, np.flatnonzero(ok)), code[ok], ts[ok], dur[ok]


def build_table(rows: list[_Event], code: np.ndarray, ts: np.ndarray,
                dur: np.ndarray) -> pd.DataFrame:
    """Columns of the event table, one C-level pass per column over the rows that carry it.

    `code`, `ts`, `dur`: the category code, start and duration columns, already validated.
    """
    n = len(rows)
    args = [e.args or _NO_ARGS for e in rows]
    cats = pd.Categorical.from_codes(cast("npt.NDArray[np.integer[Any]]", code),
                                     categories=pd.Index(ALL_CATEGORIES))

    def rows_of(*names: str) -> np.ndarray:
        return np.flatnonzero(np.isin(code, [_CAT_CODE[c] for c in names]))

    gpu, ops = rows_of(*GPU_CATEGORIES), rows_of("cpu_op")
    linked = rows_of(*GPU_CATEGORIES, "cuda_runtime", "cuda_driver")
    gpu_args, op_args = _pick(args, gpu), _pick(args, ops)
    df = pd.DataFrame({
        "cat": cats, "name": _categorical(map(attrgetter("name"), rows), n),
        "ts_us": ts, "dur_us": dur, "pid": _ids(rows, "pid"), "tid": _ids(rows, "tid"),
        "device": _sparse(n, gpu, gpu_args, "device"),
        "stream": _sparse(n, gpu, gpu_args, "stream"),
        "correlation": _sparse(n, linked, _pick(args, linked), "correlation"),
        "external_id": np.maximum(_col(args, "external_id"), _col(args, "external_id_old")),
        "bytes": _sparse(n, gpu, gpu_args, "nbytes"),
        # shapes and dtypes of cpu ops as JSON text ("" elsewhere)
        "input_dims": _json_column(op_args, "input_dims", ops, n),
        "input_types": _json_column(op_args, "input_type", ops, n),
        "end_us": ts + dur,
    })
    return order_table(df)


def order_table(df: pd.DataFrame) -> pd.DataFrame:
    """By category, then time: `Trace.of()` then slices instead of copying."""
    order = np.lexsort((df["ts_us"].to_numpy(), np.asarray(df["cat"].cat.codes)))
    return df.take(order).reset_index(drop=True)
