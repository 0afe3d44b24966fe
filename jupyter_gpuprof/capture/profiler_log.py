"""What the profiler itself prints while it starts, steps and stops, kept for the report.

torch.profiler's C++ side (Kineto, the CPU allocator) writes straight to file descriptor 2:
"profiler_start" trace markers, "Memory block of unknown size was allocated before the
profiling started". In a notebook that shows as red stderr under the cell, as if the user's
code had failed. The driver runs each profiler call with descriptor 2 pointed at a temporary
file; the lines it caught become warnings of the report, stated once with the rest.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable
from typing import IO, TypeVar

T = TypeVar("T")

#: at most this many distinct lines are kept (a chatty profiler must not flood the report)
MAX_LINES = 20


class ProfilerLog:
    """Catches descriptor 2 around profiler calls; `lines()` is what they printed."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._broken = False

    def around(self, call: Callable[[], T]) -> T:
        """Run `call` with descriptor 2 going to the log (as is, if it cannot be redirected)."""
        if self._broken:
            return call()
        try:
            log = self._file = self._file or tempfile.TemporaryFile()
            sys.stderr.flush()
            saved = os.dup(2)
        except (OSError, ValueError):
            self._broken = True  # no descriptor 2 to take over: leave the output alone
            return call()
        try:
            os.dup2(log.fileno(), 2)
            return call()
        finally:
            os.dup2(saved, 2)
            os.close(saved)

    def lines(self) -> list[str]:
        """The distinct non-empty lines caught, in order (at most MAX_LINES); closes the log."""
        if self._file is None:
            return []
        self._file.seek(0)
        text = self._file.read().decode("utf-8", "replace")
        self._file.close()
        self._file = None
        out: list[str] = []
        for line in (raw.strip() for raw in text.splitlines()):
            if line and line not in out:
                out.append(line)
        return out[:MAX_LINES]
