"""Reading a trace file's bytes (gzip or plain), with one-line errors; no heavy imports.

Kept apart from the parser so the command line can start decompressing (zlib releases the
GIL) while pandas and numpy are still being imported.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import cast


def _isal_error() -> type[Exception]:
    try:
        from isal.isal_zlib import error
    except ImportError:
        return zlib.error
    return cast("type[Exception]", error)  # isal's stubs call it an instance


class TraceError(ValueError):
    """A trace file that cannot be read; the message is one line and names the file."""


def _inflate() -> Callable[[bytes], bytes]:
    """gzip decompression: ISA-L's (2x faster) when the optional `isal` package is installed."""
    try:
        from isal import isal_zlib
    except ImportError:
        return lambda raw: zlib.decompress(raw, wbits=31)
    return lambda raw: isal_zlib.decompress(raw, wbits=31)


def read_trace_bytes(path: Path) -> bytes:
    """The decompressed contents of a `.json` or `.json.gz` trace."""
    try:
        raw = path.read_bytes()
        return _inflate()(raw) if raw[:2] == b"\x1f\x8b" else raw
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except (EOFError, gzip.BadGzipFile, zlib.error, _isal_error()) as exc:
        raise TraceError(
            f"{path}: truncated or corrupt gzip ({exc}); re-export the trace") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror or exc})") from None


class Prefetch:
    """A trace file being read and decompressed in a background thread.

    `take()` hands the bytes over and forgets them, so the parser can free them as soon as it
    has decoded them (a 300 MB buffer should not outlive its decoding).
    """

    def __init__(self, path: Path) -> None:
        pool = ThreadPoolExecutor(max_workers=1)
        self._future: Future[bytes] | None = pool.submit(read_trace_bytes, path)
        pool.shutdown(wait=False)

    def take(self) -> bytes:
        """The file's bytes (raises the reading error, if any); callable once."""
        future, self._future = self._future, None
        if future is None:
            raise RuntimeError("Prefetch.take() called twice")
        return future.result()
