"""Reading a trace file's bytes (gzip or plain), with one-line errors; no heavy imports.

Kept apart from the parser so the command line can start decompressing (zlib releases the
GIL) while pandas and numpy are still being imported.
"""

from __future__ import annotations

import gzip
import os
import queue
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, cast


def _isal_error() -> type[Exception]:
    try:
        from isal.isal_zlib import error
    except ImportError:
        return zlib.error
    return cast("type[Exception]", error)  # isal's stubs call it an instance


class TraceError(ValueError):
    """A trace file that cannot be read; the message is one line and names the file."""


#: the cap on a trace's decompressed size, so one file of a shared runs folder (a 2 MB gzip
#: that inflates to 2 GB) cannot take the server's memory: the server's
#: ``c.GpuProf.max_trace_mb`` sets it (`set_max_trace_mb`), the command line reads this
#: variable; a trace whose JSON is larger is refused with a one-line error
MAX_TRACE_ENV = "JUPYTER_GPUPROF_MAX_TRACE_MB"
DEFAULT_MAX_TRACE_MB = 1024
#: the cap on a trace's events (each event has one "ph" key, counted in the bytes before any
#: decoding): ten times the largest trace of the benchmarks (2 M events)
MAX_EVENTS = 20_000_000
CHUNK = 8 << 20  # gzip is inflated this much at a time, so the cap stops it early
_configured_mb: list[int | None] = [None]


def set_max_trace_mb(mb: int | None) -> None:
    """Set the process's cap on a trace's decompressed size (None: the variable or default)."""
    _configured_mb[0] = mb


def max_trace_bytes() -> int:
    """The cap in bytes: `set_max_trace_mb`'s, else $JUPYTER_GPUPROF_MAX_TRACE_MB, else 1 GiB."""
    mb = _configured_mb[0]
    if mb is None:
        try:
            mb = int(os.environ.get(MAX_TRACE_ENV, "") or DEFAULT_MAX_TRACE_MB)
        except ValueError:
            mb = DEFAULT_MAX_TRACE_MB
    return max(1, mb) << 20


def _decompressobj() -> Any:
    """A gzip decompressor: ISA-L's (2x faster) when the optional `isal` package is installed."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib.decompressobj(wbits=31)
    return isal_zlib.decompressobj(wbits=31)


def _too_big(path: Path, cap: int) -> TraceError:
    return TraceError(f"{path}: its JSON is larger than {cap >> 20} MB, the cap on a trace's "
                      f"decompressed size; raise c.GpuProf.max_trace_mb (the server) or "
                      f"${MAX_TRACE_ENV} to read it")


def inflate_chunks(f: BinaryIO, path: Path, cap: int) -> Iterator[bytes]:
    """A gzip stream's contents (every member), inflated CHUNK at a time: TraceError as soon
    as the output passes ``cap``, never after inflating it all."""
    total = 0
    d = _decompressobj()
    pending = b""
    while True:
        if not pending:
            pending = f.read(CHUNK)
            if not pending:
                pending = d.flush()  # at most a window's worth is still held
                total += len(pending)
                if total > cap:
                    raise _too_big(path, cap)
                yield pending
                break
        out = d.decompress(pending, CHUNK)
        pending = d.unconsumed_tail
        total += len(out)
        if total > cap:
            raise _too_big(path, cap)
        yield out
        if d.eof:
            rest = d.unused_data + pending
            if rest.strip(b"\0"):  # the next gzip member
                d, pending = _decompressobj(), rest
            else:
                pending = b""
                if not f.read(1):
                    break
                raise EOFError("data after the end of the gzip stream")
    if not d.eof:
        raise EOFError("compressed file ended before the end-of-stream marker was reached")


def inflate(f: BinaryIO, path: Path, cap: int) -> bytes:
    """A gzip stream's whole contents (see `inflate_chunks`)."""
    return b"".join(inflate_chunks(f, path, cap))


def trace_chunks(path: Path, max_bytes: int | None = None) -> Iterator[bytes]:
    """The decompressed contents of a `.json` or `.json.gz` trace, CHUNK at a time, at most
    ``max_bytes`` (default `max_trace_bytes()`) in all; the reading errors as TraceError."""
    cap = max_trace_bytes() if max_bytes is None else max_bytes
    try:
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
            f.seek(0)
            if gz:
                yield from inflate_chunks(f, path, cap)
                return
            total = 0
            while block := f.read(CHUNK):
                total += len(block)
                if total > cap:
                    raise _too_big(path, cap)
                yield block
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except (EOFError, gzip.BadGzipFile, zlib.error, _isal_error()) as exc:
        raise TraceError(
            f"{path}: truncated or corrupt gzip ({exc}); re-export the trace") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror or exc})") from None


def check_events(data: bytes, path: Path, limit: int | None = None) -> None:
    """TraceError when the trace holds more events than MAX_EVENTS (counted by their "ph"
    keys in the bytes, before decoding builds any of them)."""
    limit = MAX_EVENTS if limit is None else limit
    n = data.count(b'"ph"')
    if n > limit:
        raise too_many_events(path, n, limit)


def too_many_events(path: Path, n: int, limit: int = MAX_EVENTS) -> TraceError:
    """The one-line error for a trace of more than `limit` events (`n` counted so far)."""
    return TraceError(f"{path}: about {n:,} events, more than the {limit:,} a trace may "
                      "hold here; profile fewer steps (the schedule's active steps)")


def read_trace_bytes(path: Path, max_bytes: int | None = None) -> bytes:
    """The decompressed contents of a `.json` or `.json.gz` trace, at most ``max_bytes``
    (default `max_trace_bytes()`) and MAX_EVENTS events."""
    data = b"".join(trace_chunks(path, max_bytes))
    check_events(data, path)
    return data


class Prefetch:
    """A trace file being read and decompressed in a background thread, a few chunks ahead of
    its decoding (zlib releases the GIL), so memory holds those chunks, never the whole file.

    `chunks()` hands them over in order (the reading error, if any, where it happened);
    `close()` stops the thread when the reader gives up early.
    """

    AHEAD = 4  # chunks inflated ahead of the decoder

    def __init__(self, path: Path) -> None:
        self.path = path
        self._queue: queue.Queue[bytes | BaseException | None] = queue.Queue(self.AHEAD)
        self._stop = threading.Event()
        self._taken = False
        threading.Thread(target=self._run, name="trace-prefetch", daemon=True).start()

    def _put(self, item: bytes | BaseException | None) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            for chunk in trace_chunks(self.path):
                if not self._put(chunk):
                    return
        except BaseException as exc:  # handed to the reader, raised there
            self._put(exc)
            return
        self._put(None)

    def chunks(self) -> Iterator[bytes]:
        """The file's decompressed chunks, in order; callable once."""
        if self._taken:
            raise RuntimeError("Prefetch.chunks() called twice")
        self._taken = True
        try:
            while (item := self._queue.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self.close()

    def close(self) -> None:
        """Stop reading (what was not handed over is dropped)."""
        self._stop.set()
