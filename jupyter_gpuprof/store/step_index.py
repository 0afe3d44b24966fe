"""A run's per-step timeline index: every profiled step's events, built once per trace.

``GET /runs/<id>/timeline?step=K`` used to parse the whole trace on every request (four
requests at once on a 2 M-event run held four parsed traces: 5.4 GB). The report layer builds
each step's reply once, and this module keeps them in the run folder: `timeline.steps.bin`
holds each reply zlib-compressed one after another, `timeline.index.json` where each one is and
which trace (size and mtime) they were built from; a request then reads one step's bytes.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, TypedDict

import msgspec

from . import safe_files
from .json_checks import decode
from .run import Run

INDEX_FILE = "timeline.index.json"
BLOBS_FILE = "timeline.steps.bin"
VERSION = 1


class StepIndex(TypedDict):
    """timeline.index.json: the trace it was built from and where each step's reply is."""

    version: int
    trace: list[int]  # [size, mtime_ns] of the trace file
    steps: dict[str, list[int]]  # step number -> [offset, length] in timeline.steps.bin


def trace_signature(run: Run) -> list[int] | None:
    """Size and mtime of the run's single trace (None: no single trace)."""
    traces = run.trace_paths()
    if len(traces) != 1:
        return None
    st = safe_files.regular_file(run.path, traces[0].name)
    return None if st is None else [st.st_size, st.st_mtime_ns]


def read_index(run: Run) -> StepIndex | None:
    """The run's index when it was built from the trace the run holds now, else None."""
    try:
        index: StepIndex = msgspec.convert(decode(run.read_file(INDEX_FILE)), StepIndex)
    except (OSError, ValueError, msgspec.ValidationError):
        return None
    if index["version"] != VERSION or index["trace"] != trace_signature(run):
        return None
    return index


def read_step(run: Run, index: StepIndex, step: int) -> dict[str, Any] | None:
    """One step's reply from the blobs file (None: the trace has no such step)."""
    where = index["steps"].get(str(step))
    if where is None:
        return None
    offset, length = where
    with safe_files.open_read(run.path, BLOBS_FILE) as f:
        data = os.pread(f.fileno(), length, offset)
    if len(data) != length:
        raise ValueError(f"{BLOBS_FILE} is shorter than its index says")
    value = decode(zlib.decompress(data))
    return value if isinstance(value, dict) else None


def write_index(run: Run, signature: list[int],
                replies: Iterable[tuple[int, Mapping[str, Any]]]) -> dict[int, bytes]:
    """Write the blobs and the index (blobs first: an index never names missing bytes);
    returns each step's compressed reply, for a caller that cannot write (a read-only root)."""
    blobs: dict[int, bytes] = {}
    for step, reply in replies:
        blobs[step] = zlib.compress(json.dumps(reply, allow_nan=False).encode(), 6)
    steps: dict[str, list[int]] = {}
    offset = 0
    for step, blob in blobs.items():
        steps[str(step)] = [offset, len(blob)]
        offset += len(blob)
    try:
        safe_files.write_bytes(run.path, BLOBS_FILE, b"".join(blobs.values()))
        index = StepIndex(version=VERSION, trace=signature, steps=steps)
        safe_files.write_bytes(run.path, INDEX_FILE, json.dumps(index).encode())
    except OSError:
        pass  # a read-only runs root: served from memory this once
    return blobs
