"""Reading a trace file's bytes (gzip or plain), with one-line errors; no heavy imports.

Kept apart from the parser so the command line can start decompressing (zlib releases the
GIL) while pandas and numpy are still being imported.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path


class TraceError(ValueError):
    """A trace file that cannot be read; the message is one line and names the file."""


def read_trace_bytes(path: Path) -> bytes:
    """The decompressed contents of a `.json` or `.json.gz` trace."""
    try:
        raw = path.read_bytes()
        return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    except FileNotFoundError:
        raise TraceError(f"{path}: no such trace file") from None
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise TraceError(
            f"{path}: truncated or corrupt gzip ({exc}); re-export the trace") from None
    except OSError as exc:
        raise TraceError(f"{path}: cannot read ({exc.strerror or exc})") from None
