"""One try process of `run --try`, kept on a leash: its output capped, Ctrl-C escalated, nothing
it started left behind.

A try re-runs the user's own command, which may print without end, ignore SIGINT or fork a
helper that outlives it. The try runs in its own process group; its output goes through a pipe
of which the first `LOG_HEAD_BYTES` and the last `LOG_TAIL_BYTES` are kept in its log (the error
line comes from the tail); Ctrl-C sends SIGINT to the group, then SIGTERM after
`INTERRUPT_GRACE_S`, then SIGKILL after `TERMINATE_GRACE_S`; and once the try is over, whatever
is left of its group, and any process carrying its `ENV_TRY_TOKEN` (a daemon that left the group
with setsid), is killed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import BinaryIO

from ..protocol import ENV_TRY_TOKEN

#: how much of a try's output its log keeps: the start, and the end (its error is there)
LOG_HEAD_BYTES = 4 << 20
LOG_TAIL_BYTES = 256 << 10
#: Ctrl-C: SIGINT to the try's group, SIGTERM this much later, SIGKILL that much after
INTERRUPT_GRACE_S = 3.0
TERMINATE_GRACE_S = 2.0
#: once the try ended, how long its output may still be drained (a killed daemon's pipe)
DRAIN_S = 2.0
_CHUNK = 1 << 16


class CappedLog:
    """Copies a pipe into a log file: the first LOG_HEAD_BYTES, a line saying how much was left
    out, then the last LOG_TAIL_BYTES; in a thread, so a try that prints fast never blocks."""

    def __init__(self, pipe: BinaryIO, log: BinaryIO) -> None:
        self.pipe, self.log = pipe, log
        self.total = 0
        self._tail: deque[bytes] = deque()
        self._tail_bytes = 0
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._copy, daemon=True)
        self._thread.start()

    def _copy(self) -> None:
        fd = self.pipe.fileno()
        with contextlib.suppress(OSError):
            while chunk := os.read(fd, _CHUNK):
                with self._lock:
                    if self._closed:
                        return
                    room = max(0, LOG_HEAD_BYTES - self.total)
                    self.total += len(chunk)
                    if room:
                        self.log.write(chunk[:room])
                        self.log.flush()  # the log is read while the try runs
                    if len(chunk) > room:
                        self._keep(chunk[room:])

    def _keep(self, data: bytes) -> None:
        self._tail.append(data)
        self._tail_bytes += len(data)
        while self._tail_bytes - len(self._tail[0]) >= LOG_TAIL_BYTES:
            self._tail_bytes -= len(self._tail.popleft())

    def close(self) -> None:
        """Wait (at most DRAIN_S) for the output to end, then write the kept tail; a pipe still
        held open by a process that survived is left to its thread, which writes no more."""
        self._thread.join(DRAIN_S)
        with self._lock:
            self._closed = True
            tail = b"".join(self._tail)[-LOG_TAIL_BYTES:]
            left_out = self.total - LOG_HEAD_BYTES - len(tail)
            if left_out > 0:
                self.log.write(f"\n[gpuprof: {left_out:,} bytes of output left out]\n".encode())
            self.log.write(tail)
            self.log.flush()
        if not self._thread.is_alive():
            self.pipe.close()


def signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    """Send `sig` to the try and every process it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


def _carriers(token: str) -> list[int]:
    """The pids (of this user, Linux /proc) whose environment holds this try's token."""
    needle = f"{ENV_TRY_TOKEN}={token}".encode()
    found = []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            with contextlib.suppress(OSError):
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(entry))
    return found


def stop_leftovers(proc: subprocess.Popen[bytes], token: str) -> None:
    """Kill what the try left running: its group, and any process carrying its token."""
    signal_group(proc, signal.SIGKILL)
    for pid in _carriers(token):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def wait_try(proc: subprocess.Popen[bytes], timeout_s: float) -> tuple[int | None, bool]:
    """The try's exit status (None: stopped after `timeout_s`), and whether Ctrl-C was pressed
    meanwhile: then its group gets SIGINT, SIGTERM INTERRUPT_GRACE_S later and SIGKILL
    TERMINATE_GRACE_S after that (a Ctrl-C pressed again skips to the next), so a try that
    ignores SIGINT still stops."""
    deadline = time.monotonic() + timeout_s
    ladder = [(signal.SIGINT, INTERRUPT_GRACE_S), (signal.SIGTERM, TERMINATE_GRACE_S)]
    interrupted = False

    def escalate() -> float:
        sig, grace = ladder.pop(0) if ladder else (signal.SIGKILL, TERMINATE_GRACE_S)
        signal_group(proc, sig)
        return time.monotonic() + grace

    while True:
        try:
            return proc.wait(timeout=max(0.0, deadline - time.monotonic())), interrupted
        except KeyboardInterrupt:
            interrupted = True
            deadline = escalate()
        except subprocess.TimeoutExpired:
            if interrupted:
                deadline = escalate()
                continue
            signal_group(proc, signal.SIGKILL)  # DataLoader workers and helpers too
            proc.wait()
            return None, False


@contextlib.contextmanager
def leashed(cmd: list[str], env: dict[str, str], log: BinaryIO
            ) -> Iterator[subprocess.Popen[bytes]]:
    """Start the try (own group, output through a `CappedLog`, a fresh `ENV_TRY_TOKEN`); on
    leaving, kill what it left running and finish its log. OSError if it cannot start."""
    token = secrets.token_hex(8)
    proc = subprocess.Popen(cmd, env={**env, ENV_TRY_TOKEN: token}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True,
                            stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    capped = CappedLog(proc.stdout, log)  # type: ignore[arg-type]
    try:
        yield proc
    finally:
        if proc.poll() is None:
            signal_group(proc, signal.SIGKILL)
            proc.wait()
        stop_leftovers(proc, token)
        capped.close()
