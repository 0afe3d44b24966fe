"""A big trace's pieces decoded by forked processes that read the same file and claim pieces in
turn, so every core decodes, and decoding starts before the analysis' imports are done.

JSON decoding holds the GIL, so threads do not help. Each decoder is forked before this process
imports pandas (it only needs numpy and msgspec: `event_fields`), so it starts small and decodes
while this process is still importing. It inflates and splits the file itself (no piece crosses
a pipe), claims the next piece through a counter every process shares, decodes the pieces it
claims into columns (`piece_columns`) and sends them back through its own pipe. This process
walks the pieces in file order too: a piece nobody has claimed it claims and decodes itself, any
other it takes from the decoder that claimed it. What a decoder cannot deliver (it failed or
died, its piece was cut elsewhere, or the trace is not laid out as the profiler writes it) this
process decodes itself, so every error reads as it does without decoders. A decoder claims at
most `AHEAD` pieces past the one this process is at: memory holds a few pieces' columns.

No decoders: fewer than 2 cores, no `fork` (macOS, Windows), other threads running here (a
kernel, the server: a forked child inherits their held locks), a small file, or
$JUPYTER_GPUPROF_DECODERS=0.
"""

from __future__ import annotations

import contextlib
import mmap
import multiprocessing
import os
import pickle
import selectors
import signal
import struct
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

#: the variable that sets how many processes decode beside this one (0: none)
DECODERS_ENV = "JUPYTER_GPUPROF_DECODERS"
#: at most this many decoders, whatever the cores (each inflates the whole file itself)
MAX_DECODERS = 8
#: a decoder claims no piece further than this past the one this process is at
AHEAD = 8
#: a file of fewer bytes than this (decompressed, estimated) is not worth a process
MIN_BYTES = 24 << 20
#: a gzip trace inflates about this many times (Kineto JSON: 8-12x)
GZIP_RATIO = 8
#: pieces the board tracks (one byte each: who claimed it); past them this process decodes
SLOTS = 1 << 20
_FRAME = struct.Struct("<qqq")  # piece index, piece length, payload length (-1: not decoded)
_NEXT, _HERE = 0, 8  # the board's counters: next unclaimed piece, the piece this process is at
_OWNERS = 16


def decoders_wanted(path: Path) -> int:
    """How many decoders for this file: $JUPYTER_GPUPROF_DECODERS, else one per core this
    process may use but one (on 2 cores: one, and this process decodes its share too), at most
    MAX_DECODERS; 0 where fork is unavailable or unsafe, or the file is small."""
    if "fork" not in multiprocessing.get_all_start_methods() or threading.active_count() > 1:
        return 0
    try:
        asked = int(os.environ.get(DECODERS_ENV, "") or -1)
    except ValueError:
        asked = -1
    if asked >= 0:
        return min(asked, MAX_DECODERS)
    try:
        size = path.stat().st_size
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
    except OSError:
        return 0
    if size * (GZIP_RATIO if gz else 1) < MIN_BYTES:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    return max(0, min(cores - 1, MAX_DECODERS))


class _Board:
    """Who decodes which piece: the next unclaimed piece, where this process is, the owners."""

    def __init__(self) -> None:
        self.mem = mmap.mmap(-1, _OWNERS + SLOTS)  # anonymous: shared with the forked children
        self.lock = multiprocessing.get_context("fork").Lock()
        self.parent = os.getpid()

    def claim(self, k: int, me: int) -> bool:
        """Piece k for `me` (0: this process) if nobody has it; a decoder waits while k is more
        than AHEAD past this process."""
        if k >= SLOTS:
            return me == 0
        while True:
            with self.lock:
                if struct.unpack_from("<q", self.mem, _NEXT)[0] != k:
                    return False  # taken: every process visits every piece in order
                if me == 0 or k <= struct.unpack_from("<q", self.mem, _HERE)[0] + AHEAD:
                    struct.pack_into("<q", self.mem, _NEXT, k + 1)
                    self.mem[_OWNERS + k] = me
                    return True
            if os.getppid() != self.parent:
                raise SystemExit  # this decoder's reader is gone (it never closed us)
            time.sleep(0.002)

    def at(self, k: int) -> None:
        struct.pack_into("<q", self.mem, _HERE, k)

    def owner(self, k: int) -> int:
        return self.mem[_OWNERS + k] if k < SLOTS else 0


class PieceShare:
    """The decoders of one trace file, and the pieces' columns they sent back."""

    def __init__(self, path: Path, n: int, keep_python: bool = False) -> None:
        self.keep_python = keep_python
        self.board = _Board()
        self.pids: list[int] = []
        self.done: set[int] = set()  # decoders whose pipe has closed
        self.got: dict[int, tuple[int, bytes | None]] = {}
        self.taken = 0  # pieces a decoder delivered
        self.exits: dict[int, int] = {}  # pid -> exit status of the decoders reaped
        self.cond = threading.Condition()
        reads: list[int] = []
        for me in range(1, n + 1):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the decoder: never returns
                os.close(r)
                _decoder(path, keep_python, me, self.board, w)
            os.close(w)
            self.pids.append(pid)
            reads.append(r)
        self.drain = threading.Thread(target=self._drain, args=(reads,), name="piece-share",
                                      daemon=True)
        self.drain.start()

    def _drain(self, reads: list[int]) -> None:
        """Read every decoder's frames as they come (os.read lets the GIL go)."""
        sel = selectors.DefaultSelector()
        for me, fd in enumerate(reads, 1):
            sel.register(fd, selectors.EVENT_READ, me)
        bufs = {fd: bytearray() for fd in reads}
        while sel.get_map():
            for key, _ in sel.select():
                fd, me = key.fd, key.data
                data = os.read(fd, 1 << 20)
                buf = bufs[fd]
                if not data:
                    sel.unregister(fd)
                    os.close(fd)
                    with self.cond:
                        self.done.add(me)
                        self.cond.notify_all()
                    continue
                buf += data
                while len(buf) >= _FRAME.size:
                    k, length, size = _FRAME.unpack_from(buf)
                    end = _FRAME.size + max(size, 0)
                    if len(buf) < end:
                        break
                    payload = bytes(buf[_FRAME.size:end]) if size >= 0 else None
                    del buf[:end]
                    with self.cond:
                        self.got[k] = (length, payload)
                        self.cond.notify_all()

    def _take(self, k: int) -> tuple[int, bytes | None] | None:
        """Piece k as its decoder sent it; None when it never will (its decoder is gone)."""
        owner = self.board.owner(k)
        with self.cond:
            while k not in self.got:
                if owner in self.done:
                    return None
                self.cond.wait(0.1)
            return self.got.pop(k)

    def columns(self, body: Iterable[bytes | bytearray], decode: Callable[[Any], Any]
                ) -> Iterator[Any]:
        """Each piece's columns in file order: claimed and decoded here, or taken from the
        decoder that claimed it (decoded here when it could not)."""
        for k, piece in enumerate(body):
            self.board.at(k)
            if self.board.claim(k, 0):
                yield decode(piece)
                continue
            sent = self._take(k)
            if sent is None or sent[1] is None or sent[0] != len(piece):
                yield decode(piece)  # the decoder's error, or a piece cut elsewhere: ours
            else:
                self.taken += 1
                yield pickle.loads(sent[1])

    def close(self) -> None:
        """Stop the decoders (their work is no longer needed) and reap them."""
        for pid in self.pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for pid in self.pids:
            with contextlib.suppress(OSError):
                self.exits[pid] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        self.pids = []
        self.drain.join(timeout=5)  # their pipes are closed: it ends


def start(path: Path, keep_python: bool = False) -> PieceShare | None:
    """Decoders for this trace file where the machine has cores to spare (`decoders_wanted`)."""
    n = decoders_wanted(path)
    return PieceShare(path, n, keep_python) if n else None


def _decoder(path: Path, keep_python: bool, me: int, board: _Board, w: int) -> None:
    """A forked decoder's life: the file's pieces in order, the ones it claims decoded and
    sent; it ends with os._exit (the parent's exit handlers and buffers are not its own)."""
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
        from . import trace_stream
        from .piece_columns import decode_piece_columns
        from .tracefile import trace_chunks

        pieces = trace_stream.split_events(trace_chunks(path))
        next(pieces)  # the head: the parent's
        tail: list[bytes | bytearray] = []
        for k, piece in enumerate(trace_stream.all_but_last(pieces, tail)):
            if not board.claim(k, me):
                continue
            try:
                payload = pickle.dumps(decode_piece_columns(piece, keep_python),
                                       pickle.HIGHEST_PROTOCOL)
            except BaseException:  # noqa: BLE001 - the parent decodes it and says why
                _send(w, _FRAME.pack(k, len(piece), -1))
                break
            _send(w, _FRAME.pack(k, len(piece), len(payload)) + payload)
    except BaseException:  # noqa: BLE001, S110 - the parent decodes what was not sent
        pass
    finally:
        os._exit(0)


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
