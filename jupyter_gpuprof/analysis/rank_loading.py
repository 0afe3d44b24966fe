"""Every rank of a run parsed and analysed, in spawned worker processes when that pays.

Each worker parses one trace, analyses it, reduces it to its `RankSummary` and drops it, so
analysing N ranks needs about one trace's memory per worker, not N; the pool is sized by
CPUs and by the memory a worker needs for its largest trace.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from .rank_summary import RankSummary, summarize_rank
from .summary import Analysis, analyze
from .timeline_ranks import rank_lanes
from .trace import load_trace

#: traces smaller than this in total (bytes on disk) are parsed in-process: a pool costs more
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
#: a worker needs about this many times its gzipped trace in memory (decode + event table)
WORKER_MEM_PER_GZ_BYTE = 40


def load_rank(path: str | Path, baseline_step_ms: Sequence[float] | None = None,
              flops_per_step: float | None = None, default_rank: int = 0,
              keep_analysis: bool = True, n_ranks: int = 0) -> tuple[Analysis | None, RankSummary]:
    """Parse and analyse one rank's trace (and its lanes, one of `n_ranks`); drop the trace."""
    trace = load_trace(path)
    a = analyze(trace, list(baseline_step_ms) if baseline_step_ms else None, flops_per_step)
    summary = summarize_rank(trace, a, default_rank)
    summary.lanes = rank_lanes(trace, a, summary.rank, n_ranks) if n_ranks else None
    return (a if keep_analysis else None), summary


def _available_bytes() -> int | None:
    """Memory available to new workers (None where the system does not say), to size the pool."""
    try:
        with open("/proc/meminfo") as f:
            return next((int(line.split()[1]) * 1024 for line in f
                         if line.startswith("MemAvailable:")), None)
    except OSError:
        return None


def default_workers(paths: Sequence[str | Path]) -> int:
    """Worker processes for these traces: 1 for small runs, else bounded by CPUs and memory."""
    sizes = [Path(p).stat().st_size for p in paths]
    if len(paths) < 2 or sum(sizes) < PARALLEL_MIN_BYTES:
        return 1
    n = min(len(paths), os.cpu_count() or 1)
    avail = _available_bytes()
    if avail:
        n = min(n, max(1, avail // max(1, WORKER_MEM_PER_GZ_BYTE * max(sizes))))
    return max(1, n)


def load_ranks(paths: Sequence[str | Path], baseline_step_ms: Sequence[float] | None = None,
               flops_per_step: float | None = None, workers: int | None = None,
               keep_analysis: bool = True, named_ranks: Sequence[int | None] = (),
               timeline: bool = False) -> list[tuple[Analysis | None, RankSummary]]:
    """Analyse every rank's trace, in parallel worker processes when it pays; in path order.

    A trace without distributedInfo takes the rank its file name states (`named_ranks`), else
    its position. `timeline`: each rank also brings its lanes of the run's timeline.
    """
    workers = default_workers(paths) if workers is None else workers
    named = list(named_ranks) + [None] * (len(paths) - len(named_ranks))
    n = len(paths) if timeline else 0
    args = [(p, baseline_step_ms, flops_per_step, i if r is None else r, keep_analysis, n)
            for i, (p, r) in enumerate(zip(paths, named, strict=True))]
    if workers <= 1:
        return [load_rank(*a) for a in args]
    # spawn: forking a Jupyter kernel (threads, CUDA) is unsafe; workers import only the analysis
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(load_rank, *zip(*args, strict=True)))
