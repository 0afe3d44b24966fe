"""Every rank of a run parsed and analysed, in spawned worker processes when that pays.

Each worker parses one trace, analyses it, reduces it to its `RankSummary` and drops it, so
analysing N ranks needs about one trace's memory per worker, not N; the pool is sized by
CPUs and by the memory a worker needs for its largest trace. Where each rank ran, its summary
can be written to a file instead (`summarize_trace_to_file`, `python -m
jupyter_gpuprof.analysis.rank_loading TRACE`; format in `rank_files`) and merged here unparsed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Collection, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

from ..store.layout import RANK_SUMMARY_ENDING, rank_in_name
from .rank_files import is_rank_summary_file, read_rank_summary, write_rank_summary
from .rank_summary import RankSummary, summarize_rank
from .summary import Analysis, analyze
from .timeline_ranks import rank_lanes
from .trace import load_trace
from .tracefile import TraceError

#: traces smaller than this in total (bytes on disk) are parsed in-process: a pool costs more
PARALLEL_MIN_BYTES = 32 * 1024 * 1024
#: a worker needs about this many times its gzipped trace in memory (decode + event table)
WORKER_MEM_PER_GZ_BYTE = 40


def load_rank(path: str | Path, baseline_step_ms: Sequence[float] | None = None,
              flops_per_step: float | None = None, default_rank: int = 0,
              keep_analysis: bool = True, n_ranks: int = 0,
              side: Mapping[str, object] | None = None) -> tuple[Analysis | None, RankSummary]:
    """Parse and analyse one rank's trace (and its lanes, one of `n_ranks`); drop the trace.

    A rank summary file (`rank_files`: made where the rank ran) is read as it is: no analysis.
    `side`: `analyze`'s keywords from the run's meta beside the baseline (its stalls, waits
    for data, steps after the capture), given to the rank whose meta they are.
    """
    if is_rank_summary_file(path):
        return None, read_rank_summary(path)
    trace = load_trace(path)
    a = analyze(trace, list(baseline_step_ms) if baseline_step_ms else None, flops_per_step,
                **dict(side or {}))  # type: ignore[arg-type]
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
               keep_analysis: bool | Collection[int] = True, named_ranks: Sequence[int | None] = (),
               timeline: bool = False, side: Mapping[str, object] | None = None,
               ) -> list[tuple[Analysis | None, RankSummary]]:
    """Analyse every rank's trace, in parallel worker processes when it pays; in path order.

    A trace without distributedInfo takes the rank its file name states (`named_ranks`), else
    its position. `timeline`: each rank also brings its lanes of the run's timeline.
    `keep_analysis`: all, none, or the positions in `paths` whose full `Analysis` comes back
    (the rest only as their `RankSummary`, so the caller's memory does not grow per rank).
    `side`: the meta's side of the baseline (`load_rank`), which is the first path's rank's
    (a job's meta.json keeps its lowest rank's timings: `Run.merge_rank_metas`).
    """
    workers = default_workers(paths) if workers is None else workers
    named = list(named_ranks) + [None] * (len(paths) - len(named_ranks))
    n = len(paths) if timeline else 0
    keep = [keep_analysis if isinstance(keep_analysis, bool) else i in keep_analysis
            for i in range(len(paths))]
    args = [(p, baseline_step_ms, flops_per_step, i if r is None else r, keep[i], n,
             side if i == 0 else None) for i, (p, r) in enumerate(zip(paths, named, strict=True))]
    if workers <= 1:
        return [load_rank(*a) for a in args]
    # spawn: forking a Jupyter kernel (threads, CUDA) is unsafe; workers import only the analysis
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        return list(pool.map(load_rank, *zip(*args, strict=True)))


def summarize_trace_to_file(trace_path: str | Path, out: str | Path | None = None,
                            n_ranks: int = 0) -> Path:
    """Where a rank ran: parse and analyse its trace, write its rank summary beside it (or to
    `out`); `n_ranks` > 0 also keeps its lanes of an `n_ranks`-rank timeline."""
    trace_path = Path(trace_path)
    named = rank_in_name(trace_path.name)
    _, summary = load_rank(trace_path, default_rank=0 if named is None else named,
                           keep_analysis=False, n_ranks=n_ranks)
    stem = trace_path.name.split(".json")[0]
    return write_rank_summary(summary, out or trace_path.with_name(stem + RANK_SUMMARY_ENDING))


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m jupyter_gpuprof.analysis.rank_loading TRACE [OUT]`: write one rank's summary."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not 1 <= len(args) <= 2:
        print("usage: python -m jupyter_gpuprof.analysis.rank_loading TRACE [OUT"
              f"{RANK_SUMMARY_ENDING}]", file=sys.stderr)
        return 2
    try:
        out = summarize_trace_to_file(args[0], args[1] if len(args) > 1 else None)
    except (TraceError, OSError) as e:
        print(f"error: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
              file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
