"""Freed memory handed back to the system where the C allocator keeps it (glibc).

A streamed trace's columns are joined from thousands of piece-sized arrays; glibc keeps the
freed ones in its heap (they are below its adaptive mmap threshold), so without a trim the
process's resident memory stays at pieces plus table however early the pieces are freed.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

_trim: list[Any] = []


def _malloc_trim() -> Any:
    """glibc's `malloc_trim`, or None (another C library, another system)."""
    if not _trim:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                fn = ctypes.CDLL(None).malloc_trim  # this process's own C library
                fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
            except (OSError, AttributeError):
                fn = None
        _trim.append(fn)
    return _trim[0]


def give_back_freed() -> None:
    """Return the heap's free pages to the system (a no-op where there is no `malloc_trim`)."""
    fn = _malloc_trim()
    if fn is not None:
        fn(0)
