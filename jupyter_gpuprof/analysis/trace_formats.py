"""Older and other writers' spellings of a Kineto trace, brought to the one form the parser reads.

torch <= 1.9 wrote capitalised categories (`Operator`, `Runtime`, `Kernel`, `Memcpy`, `Memset`)
and, in 2020-2021, sometimes a bare JSON array of events instead of a `traceEvents` object (both
valid Chrome trace format). Without this the same GPU work reads as a "CPU-only run".
"""

from __future__ import annotations

from operator import attrgetter
from typing import Any

#: torch <= 1.9 category -> the category torch >= 1.10 writes for the same kind of event
CATEGORY_ALIASES = {
    "Operator": "cpu_op",
    "Runtime": "cuda_runtime",
    "Driver": "cuda_driver",
    "Kernel": "kernel",
    "Memcpy": "gpu_memcpy",
    "Memset": "gpu_memset",
    "User annotation": "user_annotation",
    "gpu_user_Annotation": "gpu_user_annotation",
}


def as_object_form(data: bytes | memoryview) -> bytes | memoryview:
    """The trace as a `{"traceEvents": [...]}` document; a bare event array is wrapped.

    Chrome's format lets an array lose its closing `]` (a writer killed mid-way), and a trailing
    comma before it; both are repaired so the events written so far are read.
    """
    head = bytes(data[:64]).lstrip()
    if not head.startswith(b"["):
        return data
    body = bytes(data).rstrip()
    if not body.endswith(b"]"):
        body = body.rstrip(b", \t\r\n") + b"]"
    return b'{"traceEvents":' + body + b"}"


def normalise_categories(events: list[Any]) -> int:
    """Rename old categories in place (events are mutable structs); how many were renamed."""
    present = set(map(attrgetter("cat"), events))
    if not present.intersection(CATEGORY_ALIASES):
        return 0
    renamed = 0
    for e in events:
        new = CATEGORY_ALIASES.get(e.cat)
        if new is not None:
            e.cat = new
            renamed += 1
    return renamed


def int_label(value: int | str) -> int:
    """An id as an int: old traces write thread ids as strings ("5555"), ROCm stream handles in
    hex ("0x1f"); -1 for a label that is not a number ("stream 7") or past int64."""
    if isinstance(value, int):
        return value
    text = value.strip().lower()
    try:
        n = int(text, 16) if text.startswith("0x") else int(text) if text.isdigit() else -1
    except ValueError:
        return -1
    return n if n < 2**63 else -1  # a table column holds int64


#: event kinds the analyses do not read, but whose presence says what kind of trace this is
FOREIGN_CATEGORIES = ("mtia_runtime", "mtia_ccp_events", "cuda_profiler_range")


def foreign_counts(events: list[Any]) -> dict[str, int]:
    """How many events of each `FOREIGN_CATEGORIES` kind, plus runtime calls, a trace holds."""
    cats = list(map(attrgetter("cat"), events))
    wanted = (*FOREIGN_CATEGORIES, "cuda_runtime")
    return {c: n for c in wanted if (n := cats.count(c))}


def without_gpu_activity(held: dict[str, int]) -> str:
    """What a trace with no GPU kernels or copies holds, and what cannot be measured from it."""
    mtia = held.get("mtia_runtime", 0) + held.get("mtia_ccp_events", 0)
    if mtia:
        return (f"MTIA trace: {held.get('mtia_ccp_events', 0):,} MTIA device events and "
                f"{held.get('mtia_runtime', 0):,} MTIA runtime calls, no CUDA/ROCm activity. "
                "Host ops and steps are read; MTIA device time, busy % and kernel advice are "
                "not measured by this tool.")
    if held.get("cuda_profiler_range"):
        return (f"CUPTI range-profiler trace: {held['cuda_profiler_range']:,} profiler ranges "
                f"and {held.get('cuda_runtime', 0):,} CUDA runtime calls, but no kernel "
                "records (the range profiler replaces kernel tracing). Host ops and runtime "
                "calls are read; GPU busy %, kernel durations and idle gaps cannot be measured.")
    if held.get("cuda_runtime"):
        return (f"{held['cuda_runtime']:,} CUDA runtime calls but no kernel, copy or memset "
                "records: GPU activity was not traced (activities=[CPU] only?). GPU busy % and "
                "kernel advice cannot be measured; the host-side tables are still valid.")
    return ("GPU metrics unavailable: no CUDA activity in this trace (CPU-only run); the "
            "host-side tables are still valid.")
