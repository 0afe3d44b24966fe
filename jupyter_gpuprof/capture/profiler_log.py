"""What the profiler itself prints while it starts, steps and stops, kept for the report.

torch.profiler's C++ side (Kineto, the CPU allocator) writes straight to file descriptor 2:
"profiler_start" trace markers, "Memory block of unknown size was allocated before the
profiling started". In a notebook that shows as red stderr under the cell, as if the user's
code had failed. The driver runs each profiler call with descriptor 2 pointed at a temporary
file; while the profiled steps run (the allocator's line comes from the user's own frees),
descriptor 2 goes through a pipe whose profiler lines are kept and whose other lines are passed
on as they come. The lines caught become warnings of the report, stated once with the rest.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import IO, TypeVar

T = TypeVar("T")

#: at most this many distinct lines are kept (a chatty profiler must not flood the report)
MAX_LINES = 20
#: what release() writes into the pipe to know the reader has sorted every line before it
SYNC_MARK = b"\x00gpuprof-stderr-sync\x00\n"
#: a line torch's profiler side prints during the steps (Kineto, CUPTI, the CPU allocator),
#: and how such lines (and the sync mark) begin
PROFILER_STARTS = (b"[", b"USDT", b"STAGE", b"ERROR", b"WARNING", SYNC_MARK[:1])
PROFILER_LINE = re.compile(rb"CPUAllocator\.cpp|[Kk]ineto|CUPTI|[Pp]rofiler\S*\.cpp|"
                           rb"profiler_(start|stop)")


class ProfilerLog:
    """Catches descriptor 2 around profiler calls; `lines()` is what they printed."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._broken = False
        self._held: tuple[int, threading.Event] | None = None  # (saved fd 2, lines sorted)

    def hold(self) -> None:
        """From now until release(): descriptor 2 through a pipe, profiler lines kept."""
        if self._broken or self._held is not None:
            return
        try:
            log = self._file = self._file or tempfile.TemporaryFile()
            sys.stderr.flush()
            saved = os.dup(2)
            read, write = os.pipe()
            # the reader's own copies: it outlives release() while a DataLoader worker forked
            # during the capture still holds the pipe, passing that worker's lines on
            passed, kept = os.dup(saved), os.dup(log.fileno())
        except (OSError, ValueError):
            self._broken = True
            return
        synced = threading.Event()
        reader = threading.Thread(target=_sort_lines, args=(read, passed, kept, synced),
                                  name="gpuprof-stderr", daemon=True)
        reader.start()
        os.dup2(write, 2)
        os.close(write)
        self._held = (saved, synced)

    def release(self) -> None:
        """Descriptor 2 back as it was, once every line printed before is sorted."""
        held, self._held = self._held, None
        if held is None:
            return
        saved, synced = held
        sys.stderr.flush()
        _write_all(2, SYNC_MARK)  # the reader reaches it after every line before it
        synced.wait(timeout=5)
        os.dup2(saved, 2)
        os.close(saved)

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
        self.release()
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


def _sort_lines(read: int, passed: int, kept: int, synced: threading.Event) -> None:
    """Pipe reader: each whole line to the log if the profiler printed it, else passed on;
    `synced` is set at release()'s mark. Runs until every holder of the pipe closed it."""
    rest = b""
    with os.fdopen(read, "rb", buffering=0) as pipe:
        while chunk := pipe.read(65536):
            *whole, rest = (rest + chunk).split(b"\n")
            for line in whole:
                if line.endswith(SYNC_MARK[:-1]):  # after a partial line too, if one was left
                    if line := line[:-len(SYNC_MARK) + 1]:
                        _write_all(kept if PROFILER_LINE.search(line) else passed, line)
                    synced.set()
                else:
                    _write_all(kept if PROFILER_LINE.search(line) else passed, line + b"\n")
            # a partial line that cannot become a profiler line (a progress bar's "\r"
            # updates) is passed on now, not when a newline comes
            if rest and (len(rest) > 65536 or not rest.startswith(PROFILER_STARTS)):
                _write_all(passed, rest)
                rest = b""
    if rest:
        _write_all(kept if PROFILER_LINE.search(rest) else passed, rest)
    synced.set()
    os.close(passed)
    os.close(kept)


def _write_all(fd: int, data: bytes) -> None:
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass  # a closed descriptor 2: nothing to show the line on
