"""A streamed trace's pieces decoded in worker processes where the machine has cores to spare.

JSON decoding holds the GIL, so threads do not help: pieces go to forked processes (each
decodes one into columns, `piece_columns`) while this process inflates and splits the file;
results come back in file order, at most `AHEAD` pieces per worker in flight, so memory holds
a few pieces, not the file. Two cores or fewer, a small file, no `fork` (macOS, Windows), a
process running other threads (a notebook kernel, the server: a forked child inherits their
locks held, and can hang on one) or $JUPYTER_GPUPROF_DECODE_WORKERS=1: the pieces are decoded
here, one after the other.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Generator, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from functools import partial

from .piece_columns import PieceColumns, decode_piece_columns

#: the variable that sets how many processes decode pieces (1: none, all decoded here)
WORKERS_ENV = "JUPYTER_GPUPROF_DECODE_WORKERS"
#: at most this many worker processes, whatever the cores (the parent's inflating is the
#: bound past it)
MAX_WORKERS = 8
#: pieces decoded here before workers are started: a trace smaller than this many pieces
#: (8 MB each) is not worth a process
SERIAL_PIECES = 3
#: pieces in flight per worker
AHEAD = 2


def decode_workers() -> int:
    """How many processes to decode with: $JUPYTER_GPUPROF_DECODE_WORKERS, else one per core
    this process may use but one (the core that inflates, splits and joins: on 2 cores a
    worker only trades the in-process decoding for pickling, measured no faster), at most
    MAX_WORKERS; 1 (decoded here) where `fork` is not available or not safe (other threads
    run here), or that leaves fewer than 2."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    try:
        n = int(os.environ.get(WORKERS_ENV, "") or 0)
    except ValueError:
        n = 0
    if n <= 0 and threading.active_count() > 1:
        return 1  # unasked, no fork beside other threads
    if n <= 0:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
        n = cores - 1 if cores > 2 else 1
    return max(1, min(n, MAX_WORKERS))


def decoded_pieces(pieces: Iterable[bytes | bytearray], keep_python: bool,
                   workers: int | None = None) -> Generator[PieceColumns, None, None]:
    """Each piece's columns, in the pieces' order: the first `SERIAL_PIECES` decoded here,
    the rest by `workers` processes (here too when `workers` is 1)."""
    decode = partial(decode_piece_columns, keep_python=keep_python)
    n = decode_workers() if workers is None else workers
    it = iter(pieces)
    if n <= 1:
        yield from map(decode, it)
        return
    for _, piece in zip(range(SERIAL_PIECES), it, strict=False):
        yield decode(piece)
    first = next(it, None)
    if first is None:
        return
    pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("fork"))
    pending: deque[Future[PieceColumns]] = deque([pool.submit(decode, first)])
    try:
        for piece in it:
            pending.append(pool.submit(decode, piece))
            del piece
            if len(pending) >= n * AHEAD:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for fut in pending:
            fut.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
