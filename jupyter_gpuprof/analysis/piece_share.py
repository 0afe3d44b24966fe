"""A big trace's pieces decoded by forked processes that read the same file and claim pieces in
turn, so every core decodes, and decoding starts before the analysis' imports are done.

JSON decoding holds the GIL, so threads do not help. Each decoder is forked before this process
imports pandas (it only needs numpy and msgspec: `event_fields`), so it starts small and decodes
while this process is still importing. It inflates and splits the file itself (no piece crosses
a pipe), claims the next piece through a counter every process shares, decodes the pieces it
claims into columns (`piece_columns`) and sends them back through its own pipe; the first
decoder also sends the reader the chunks it inflates, so the file is inflated once less (the
reader inflates it itself only from where that decoder stopped, if it did). This process
splits those chunks and walks the pieces in file order too: a piece nobody has claimed it
claims and decodes itself, any other it takes from the decoder that claimed it. What a
decoder cannot deliver (it failed or died, its piece was cut elsewhere, or the trace is not
laid out as the profiler writes it) this process decodes itself, so every error reads as it
does without decoders. A decoder claims at most `AHEAD` pieces past the one this process is
at: memory holds a few pieces' columns, and chunks.

No decoders: fewer than 3 cores (unless asked), no `fork` (macOS, Windows), other threads
running here (a kernel, the server: a forked child inherits their held locks), a small file,
or $JUPYTER_GPUPROF_DECODERS=0.
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
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

#: the variable that sets how many processes decode beside this one (0: none)
DECODERS_ENV = "JUPYTER_GPUPROF_DECODERS"
#: at most this many decoders, whatever the cores (each inflates the whole file itself)
MAX_DECODERS = 8
#: fewer cores than this: no decoders by default (see `decoders_wanted`)
MIN_CORES = 3
#: a decoder claims no piece further than this past the one this process is at
AHEAD = 8
#: a file of fewer bytes than this (decompressed, estimated) is not worth a process
MIN_BYTES = 24 << 20
#: a gzip trace inflates about this many times (Kineto JSON: 8-12x)
GZIP_RATIO = 8
#: pieces the board tracks (one byte each: who claimed it); past them this process decodes
SLOTS = 1 << 20
_FRAME = struct.Struct("<qqq")  # piece index, piece length, payload length (-1: not decoded)
_CHUNK, _END = -1, -2  # frames of the first decoder's inflated chunks, and their end
_NEXT, _HERE = 0, 8  # the board's counters: next unclaimed piece, the piece this process is at
_OWNERS = 16


def decoders_wanted(path: Path) -> int:
    """How many decoders for this file: $JUPYTER_GPUPROF_DECODERS, else one per core this
    process may use but one, at most MAX_DECODERS, from 3 cores on (on a 2-vCPU machine that
    was measured, two busy processes each ran 1.9x slower than one alone: a decoder there only
    adds its own inflating and the pipes, 5.2 s against 4.4 s on the 300 MB trace); 0 where
    fork is unavailable or unsafe, or the file is small."""
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
    return min(cores - 1, MAX_DECODERS) if cores >= MIN_CORES else 0


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
        self.path = path
        self.keep_python = keep_python
        self.chunkq: deque[bytearray | None] = deque()  # the first decoder's chunks (None: all)
        self.board = _Board()
        self.pids: list[int] = []
        self.done: set[int] = set()  # decoders whose pipe has closed
        self.got: dict[int, tuple[int, bytearray | None]] = {}
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
        """Read every decoder's frames as they come, each into a buffer of its size (os.readv
        lets the GIL go and copies once)."""
        sel = selectors.DefaultSelector()
        for me, fd in enumerate(reads, 1):
            sel.register(fd, selectors.EVENT_READ, _Frame(me))
        while sel.get_map():
            for key, _ in sel.select():
                frame: _Frame = key.data
                if not frame.read(key.fd):
                    sel.unregister(key.fd)
                    os.close(key.fd)
                    with self.cond:
                        self.done.add(frame.me)
                        self.cond.notify_all()
                    continue
                if frame.complete():
                    k, length, size, body = frame.take()
                    with self.cond:
                        if k == _CHUNK:
                            self.chunkq.append(body)
                        elif k == _END:
                            self.chunkq.append(None)
                        else:
                            self.got[k] = (length, body if size >= 0 else None)
                        self.cond.notify_all()

    def chunks(self) -> Iterator[bytes | bytearray]:
        """The file's inflated chunks, as the first decoder sent them; from where it stopped
        (it died, or the file is corrupt there), inflated here, so errors are raised here."""
        from .tracefile import trace_chunks

        sent = 0
        while True:
            with self.cond:
                while not self.chunkq and 1 not in self.done:
                    self.cond.wait(0.1)
                if not self.chunkq:  # its pipe closed before the end: the rest read here
                    break
                item = self.chunkq.popleft()
            if item is None:
                return
            sent += len(item)
            yield item
        skip = sent
        for chunk in trace_chunks(self.path):
            if skip >= len(chunk):
                skip -= len(chunk)
                continue
            yield chunk[skip:] if skip else chunk
            skip = 0

    def _take(self, k: int) -> tuple[int, bytearray | None] | None:
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


class _Frame:
    """One pipe's frame being read: its header, then its payload, each filled in place."""

    def __init__(self, me: int) -> None:
        self.me = me
        self.head = bytearray(_FRAME.size)
        self.body: bytearray | None = None
        self.filled = 0

    def read(self, fd: int) -> bool:
        """Read what the pipe has for this frame; False at its end."""
        into = memoryview(self.head if self.body is None else self.body)[self.filled:]
        if not len(into):
            return True
        got = os.readv(fd, [into])
        self.filled += got
        if self.body is None and self.filled == _FRAME.size:
            self.body, self.filled = bytearray(max(_FRAME.unpack(self.head)[2], 0)), 0
        return got > 0

    def complete(self) -> bool:
        return self.body is not None and self.filled == len(self.body)

    def take(self) -> tuple[int, int, int, bytearray]:
        """(piece index or _CHUNK/_END, piece length, payload size, payload); the next
        frame begins."""
        k, length, size = _FRAME.unpack(self.head)
        body = self.body if self.body is not None else bytearray()
        self.body, self.filled = None, 0
        return k, length, size, body


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

        chunks = trace_chunks(path)
        pieces = trace_stream.split_events(_handed(chunks, w) if me == 1 else chunks)
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
            _send(w, _FRAME.pack(k, len(piece), len(payload)))
            _send(w, payload)
    except BaseException:  # noqa: BLE001, S110 - the parent decodes what was not sent
        pass
    finally:
        os._exit(0)


def _handed(chunks: Iterator[bytes], w: int) -> Iterator[bytes]:
    """The chunks, each sent to the reader before it is split here; the end said once all
    are (an error while inflating ends them unsaid: the reader inflates the rest itself)."""
    for chunk in chunks:
        _send(w, _FRAME.pack(_CHUNK, 0, len(chunk)))
        _send(w, chunk)
        yield chunk
    _send(w, _FRAME.pack(_END, 0, 0))


def _send(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
