"""A Kineto JSON file decoded into typed structs that hold only the fields the analyses use.

msgspec decodes straight into them, which is what makes a 300 MB trace load in seconds with a
fraction of the memory that dict-based loaders need. A file whose fields do not all type goes
the slow way (event by event, `trace_validate`), keeping every event it can.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any

import msgspec

from . import trace_formats as formats
from .trace_validate import Drops, decode_error, decode_events_one_by_one
from .tracefile import TraceError

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
#: categories that occupy a GPU stream
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
#: an allocator instant's `Device Type` on a CUDA device
MEMORY_DEVICE_TYPE_CUDA = 1
#: an id or count as the event table stores it (int64): a larger one drops its event as "out
#: of range" instead of overflowing the table's columns
Id = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class KinetoArgs(msgspec.Struct, gc=False):
    """The `args` fields the event table reads (links, stream, bytes, shapes, allocator)."""

    external_id: Id = msgspec.field(default=-1, name="External id")
    external_id_old: Id = msgspec.field(default=-1, name="external id")  # torch <= 1.9 GPU rows
    correlation: Id = -1
    stream: Id | str = -1  # ROCm writes "0x0" on runtime calls
    device: Id = -1
    nbytes: Id | str = msgspec.field(default=-1, name="bytes")  # ROCm runtime calls: "1"
    mem_bytes: Id = msgspec.field(default=0, name="Bytes")
    total_allocated: Id = msgspec.field(default=-1, name="Total Allocated")
    device_type: Id = msgspec.field(default=-1, name="Device Type")
    device_id: Id = msgspec.field(default=-1, name="Device Id")
    input_dims: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input Dims")
    input_type: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="Input type")
    # a kernel's launch shape and CUPTI's occupancy estimate (absent on copies and older traces)
    grid: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""))
    block: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""))
    occupancy_pct: float = msgspec.field(default=-1.0, name="est. achieved occupancy %")
    # a "thread_name" metadata event's name for its thread (undecoded: other events' `name`
    # args may be anything)
    label: msgspec.Raw = msgspec.field(default=msgspec.Raw(b""), name="name")


class KinetoEvent(msgspec.Struct, gc=False):
    """One trace event, as far as the event table reads it."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: Id | str = -1
    tid: Id | str = -1
    # NaN marks a missing time, which validation drops (0.0 would pass for a real value)
    ts: float = math.nan
    dur: float = math.nan
    args: KinetoArgs | None = None


class KinetoHeader(msgspec.Struct, gc=False):
    # the profiler's own fields, as it wrote them: each reader checks the ones it uses
    deviceProperties: list[dict[str, object]] = []
    distributedInfo: dict[str, object] | None = None
    schemaVersion: int | None = None
    cuda_runtime_version: int | None = None
    cuda_driver_version: int | None = None
    record_shapes: int | None = None
    profile_memory: int | None = None
    baseTimeNanoseconds: int | None = None


class KinetoFile(KinetoHeader):
    """A whole trace file: the profiler's header fields and every event, typed."""

    traceEvents: list[KinetoEvent] = []


class _RawFile(KinetoHeader):
    """The slow path's view: each event's JSON kept undecoded, to be decoded one by one."""

    traceEvents: list[msgspec.Raw] = []


class _RawEvents(msgspec.Struct, gc=False):
    """The slower path's view, for a header with wrongly typed fields: events only."""

    traceEvents: list[msgspec.Raw] = []


#: what an event without `args` reads as (every field at its default)
NO_ARGS = KinetoArgs()


def decode(data: bytes | memoryview, path: Path, keep_python: bool, drops: Drops,
           warnings: list[str]) -> tuple[KinetoFile, int]:
    """The decoded file and how many events it held; typed in one pass when every field is.
    Malformed JSON is a `TraceError` on either path: the typed pass can stop at a wrongly
    typed event before it reaches the malformed bytes the tolerant one then meets."""
    try:
        try:
            file = msgspec.json.decode(data, type=KinetoFile)
            return file, len(file.traceEvents)
        except msgspec.ValidationError:
            return _decode_tolerant(data, path, keep_python, drops, warnings)
    except msgspec.DecodeError as exc:
        raise decode_error(exc, data, path) from None


def _decode_tolerant(data: bytes | memoryview, path: Path, keep_python: bool, drops: Drops,
                     warnings: list[str]) -> tuple[KinetoFile, int]:
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

    events = decode_events_one_by_one(raw.traceEvents, KinetoEvent, matters, drops, GPU_CATEGORIES)
    header = {f: getattr(raw, f) for f in KinetoHeader.__struct_fields__} if isinstance(
        raw, _RawFile) else {}
    return KinetoFile(**header, traceEvents=events), len(raw.traceEvents)


def thread_names(events: list[KinetoEvent]) -> dict[tuple[str, str], str]:
    """(pid, tid) -> the thread's name, from the trace's "thread_name" metadata events."""
    out: dict[tuple[str, str], str] = {}
    for e in events:
        if e.ph == "M" and e.name == "thread_name" and e.args is not None and e.args.label:
            try:
                name = msgspec.json.decode(e.args.label)
            except msgspec.DecodeError:
                continue
            if isinstance(name, str) and name:
                out[(str(e.pid), str(e.tid))] = name
    return out


def select(events: list[KinetoEvent], keep_python: bool = False
           ) -> tuple[list[KinetoEvent], list[KinetoEvent]]:
    """The complete events of kept categories, and the allocator ([memory]) instants."""
    kept = set(KEPT_CATEGORIES if keep_python else KEPT_CATEGORIES[:-1])
    formats.normalise_categories(events)
    evs = [e for e in events if e.ph == "X" and e.cat in kept]
    mems = [e for e in events if e.ph == "i" and e.name == "[memory]" and e.args is not None]
    return evs, mems
