"""Validation of trace events on read: a broken field drops its event (counted), never a number.

The fast decoder types every field; what it cannot type (a string `dur`, an int `name`, a list
`args`) sends the file through `decode_events_one_by_one`, which keeps every event it can.
Values that type but make no sense (missing, negative, non-finite or absurd times) are
dropped column-wise with numpy after decoding, so a clean 300 MB trace pays a few array passes.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from .tracefile import TraceError

#: an event longer than this is nonsense for a profiled training step (one day, in µs)
MAX_EVENT_US = 86_400e6
#: an event further than this from the trace's median timestamp is a broken clock value (µs)
MAX_TS_DISTANCE_US = 86_400e6
#: when more than this share of the events that matter (or of the GPU events) had to be
#: dropped, the trace is refused: what is left would be judged as if it were complete
MAX_DROPPED_SHARE = 0.2
UTF8_BOM = b"\xef\xbb\xbf"
_NON_JSON_TOKENS = (b"NaN", b"Infinity", b"-Infinity")
_AT_BYTE = re.compile(r"byte (\d+)")
_AT_FIELD = re.compile(r"at `\$\.?([^`]*)`")


@dataclass
class Drops:
    """Events dropped as invalid, by reason, and how many of them were GPU activity."""

    by_reason: Counter[str] = field(default_factory=Counter)
    gpu: int = 0

    @property
    def total(self) -> int:
        """How many events were dropped."""
        return sum(self.by_reason.values())

    def add(self, reason: str, n: int, n_gpu: int) -> None:
        """Count `n` dropped events (`n_gpu` of them GPU activity) under `reason`."""
        if n:
            self.by_reason[reason] += n
            self.gpu += n_gpu

    def warnings(self) -> list[str]:
        """One line per reason, most frequent first ("3,120 events dropped: negative duration")."""
        return [f"{n:,} event{'s' if n != 1 else ''} dropped: {reason}"
                for reason, n in self.by_reason.most_common()]

    def refuse_if_too_many(self, path: Path, n_kept: int, n_gpu_kept: int) -> None:
        """Raise `TraceError` when too much was dropped for the rest to be judged."""
        total, gpu = n_kept + self.total, n_gpu_kept + self.gpu
        share = self.total / total if total else 0.0
        gpu_share = self.gpu / gpu if gpu else 0.0
        if share > MAX_DROPPED_SHARE or gpu_share > MAX_DROPPED_SHARE:
            what = (f"{self.gpu:,} of {gpu:,} GPU events" if gpu_share > MAX_DROPPED_SHARE
                    else f"{self.total:,} of {total:,} events")
            reasons = ", ".join(self.by_reason)
            raise TraceError(f"{path}: {what} are invalid ({reasons}); too much is missing to "
                             f"judge the run: re-export the trace from the profiler")


class _Kind(msgspec.Struct, gc=False):
    """Just enough of an event to tell whether its loss matters."""

    ph: Any = None
    cat: Any = None
    name: Any = None


def _wrong_type_reason(exc: msgspec.ValidationError) -> str:
    where = _AT_FIELD.search(str(exc))
    text = str(exc)
    out = "out of range" in text or "Expected `int` <=" in text or "Expected `int` >=" in text
    what = "out of range" if out else "of the wrong type"
    return f"`{where.group(1)}` {what}" if where else "malformed event"


def decode_events_one_by_one(raw_events: list[msgspec.Raw], event_type: type,
                             matters: Any, drops: Drops, gpu_categories: tuple[str, ...]
                             ) -> list[Any]:
    """Events decoded one at a time; those that fail are dropped (and counted when they matter).

    `matters(ph, cat, name)` says whether an event would have been analysed: a broken event of
    a kind the table skips anyway is no loss worth a warning.
    """
    decode: Any = msgspec.json.Decoder(event_type).decode
    kind = msgspec.json.Decoder(_Kind).decode
    events = []
    for raw in raw_events:
        try:
            events.append(decode(raw))
        except msgspec.ValidationError as exc:
            try:
                k = kind(raw)
            except msgspec.ValidationError:
                continue
            if matters(k.ph, k.cat, k.name):
                drops.add(_wrong_type_reason(exc), 1, int(k.cat in gpu_categories))
    return events


def valid_times(ts: np.ndarray, dur: np.ndarray | None, is_gpu: np.ndarray,
                drops: Drops) -> np.ndarray:
    """Mask of events whose time (and duration, when given) is present, finite and sane.

    Missing values arrive as NaN (the decoder's default), so they are told apart from the
    non-finite ones only by the order of the checks below: each event counts for one reason.
    """
    ok = np.ones(len(ts), dtype=bool)

    def reject(bad: np.ndarray, reason: str) -> None:
        bad &= ok
        drops.add(reason, int(bad.sum()), int((bad & is_gpu).sum()))
        ok[bad] = False

    with np.errstate(invalid="ignore", over="ignore"):
        reject(np.isnan(ts), "no timestamp")
        reject(~np.isfinite(ts), "timestamp not finite")
        if ok.any():
            mid = float(np.median(ts[ok]))
            reject(np.abs(ts - mid) > MAX_TS_DISTANCE_US,
                   "timestamp more than a day away from the rest of the trace")
        if dur is not None:
            reject(np.isnan(dur), "no duration")
            reject(dur < 0, "negative duration")
            reject(dur > MAX_EVENT_US, "duration longer than a day or not finite")
    return ok


def strip_bom(data: bytes | memoryview, warnings: list[str]) -> bytes | memoryview:
    """The bytes without a leading UTF-8 byte-order mark (which JSON forbids), noting it."""
    if bytes(data[:3]) != UTF8_BOM:
        return data
    warnings.append("the file starts with a UTF-8 byte-order mark (ignored): it was rewritten "
                    "by a tool other than the profiler")
    return memoryview(data)[3:]


def decode_error(exc: msgspec.DecodeError, data: bytes | memoryview, path: Path) -> TraceError:
    """The one-line error for JSON the decoder refused, naming NaN/Infinity tokens and where."""
    at = _AT_BYTE.search(str(exc))
    if at:
        pos = int(at.group(1))
        for token in _NON_JSON_TOKENS:
            if bytes(data[pos:pos + len(token)]) == token:
                line = bytes(data[:pos]).count(b"\n") + 1
                return TraceError(
                    f"{path}: a bare {token.decode()} at byte {pos:,} (line {line:,}): JSON has "
                    f"no non-finite numbers, so the writer of this file broke it; write null "
                    f"there or re-export the trace")
    return TraceError(
        f"{path}: not a complete JSON trace ({exc}); the file is truncated or corrupt")
