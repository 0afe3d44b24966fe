"""Memory and time of analysing an N-rank run: worker pool with compact summaries vs the rest.

Makes N synthetic rank traces by copying real ones (cycling through the `--source` files),
shifting each copy's clock (37 µs × rank plus a seeded random skew of up to `--skew-us`) and
writing its rank into `distributedInfo`; with `--straggler-source`, rank `--straggler-rank`
is a copy of that trace instead (a real slower rank), so the straggler verdict and the
recovered clock offsets can be checked. Then measures, each mode in a fresh process:

- ``pool``: `load_ranks(paths, workers=W)`: W spawned workers parse and analyse one trace at a
  time and return its `Analysis` + `RankSummary` (what the report keeps today);
- ``pool-summaries``: the same with ``keep_analysis=False``: only the summaries come back, so
  the parent's memory does not grow with the traces; it also writes each summary to a file
  (untimed) for the next mode;
- ``files``: the summary files merged (`rank_files.read_rank_summaries`): the path where each
  rank's summary was made on its own machine and only the files are brought here;
- ``serial``: `pool` in one process, one trace at a time;
- ``all-traces``: every rank's parsed event table held at once, as loaders that build one
  cross-rank table do (for comparison: this is what needs N times one rank's memory).

Per mode: wall time; the parent's own peak RSS (its ``VmHWM``); the largest worker's peak RSS
and the peak of the summed resident memory of the process tree (both sampled every 50 ms).
Then the cross-rank analysis runs on the summaries: the slowest rank and the largest error of
the recovered clock offsets are printed. `--json-out` writes every mode's figures.

    python benchmarks/bench_multirank.py --ranks 8 \\
        --source tests/data/real/ddp2_heavy1/trace.rank0.json.gz \\
        --source tests/data/real/ddp2_heavy1/trace.rank1.json.gz
    python benchmarks/bench_multirank.py --ranks 256 --modes pool-summaries,files \\
        --source tests/data/real/ddp2_heavy1/trace.rank0.json.gz \\
        --straggler-source tests/data/real/ddp2_heavy1/trace.rank1.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MODES = ("pool", "pool-summaries", "files", "serial", "all-traces")
SHIFT_US = 37.0  # clock skew added per rank: small against a step, as on one host
SUMMARIES = "summaries"  # sub-folder of the rank summary files (pool-summaries writes them)


def rank_shifts(n: int, skew_us: float, seed: int = 25) -> list[float]:
    """Each rank's clock shift: 37 µs × rank plus a seeded random skew in [0, skew_us)."""
    rng = random.Random(seed)
    return [SHIFT_US * r + rng.uniform(0.0, skew_us) for r in range(n)]


def make_ranks(sources: list[Path], n: int, folder: Path, straggler: Path | None = None,
               straggler_rank: int = -1, skew_us: float = 0.0) -> list[Path]:
    """N rank traces: copies of `sources` (cycled; `straggler` at `straggler_rank`), clocks
    shifted by `rank_shifts`, rank numbers rewritten."""
    docs = [json.loads(gzip.decompress(p.read_bytes())) for p in sources]
    slow = json.loads(gzip.decompress(straggler.read_bytes())) if straggler else None
    out = []
    for r, shift in enumerate(rank_shifts(n, skew_us)):
        doc = slow if slow is not None and r == straggler_rank else docs[r % len(docs)]
        events = [dict(e, ts=e["ts"] + shift) if "ts" in e else e for e in doc["traceEvents"]]
        info = dict(doc.get("distributedInfo") or {}, rank=r, world_size=n)
        path = folder / f"trace.rank{r}.json.gz"
        path.write_bytes(gzip.compress(json.dumps(
            {**doc, "traceEvents": events, "distributedInfo": info}).encode(), 1))
        out.append(path)
    return out


def _tree_rss(root: int) -> dict[int, int]:
    """Resident memory in bytes of `root` and of every descendant process (Linux /proc)."""
    parents: dict[int, int] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
            with open(f"/proc/{d}/statm") as f:
                pages = int(f.read().split()[1])
        except OSError:
            continue
        parents[int(d)] = int(stat.rsplit(")", 1)[1].split()[1])
        rss[int(d)] = pages * os.sysconf("SC_PAGE_SIZE")
    tree, todo = {root}, [root]
    while todo:
        p = todo.pop()
        kids = [c for c, pp in parents.items() if pp == p and c not in tree]
        tree.update(kids)
        todo.extend(kids)
    return {p: rss.get(p, 0) for p in tree}


def _tree_rss_bytes(root: int) -> int:
    """Summed resident memory of `root` and its descendants."""
    return sum(_tree_rss(root).values())


def own_peak_mb() -> float:
    """This process's peak resident memory (VmHWM: reset by exec, unlike ru_maxrss)."""
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmHWM:")) / 1024


class PeakSampler:
    """Samples this process tree's RSS in a thread: `.peak` (summed, bytes) and `.child_peak`
    (the largest single descendant, bytes)."""

    def __init__(self, period_s: float = 0.05) -> None:
        self.period_s, self.peak, self.child_peak = period_s, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        me = os.getpid()
        tree = _tree_rss(me)
        self.peak = max(self.peak, sum(tree.values()))
        self.child_peak = max([self.child_peak] + [v for p, v in tree.items() if p != me])

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            time.sleep(self.period_s)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def measure(mode: str, paths: list[Path], workers: int, skew_us: float) -> dict:
    """Run one mode in this process and return its figures."""
    from jupyter_gpuprof.analysis.distributed import analyze_ranks
    from jupyter_gpuprof.analysis.rank_files import (
        folder_rank_summaries,
        read_rank_summaries,
        write_rank_summary,
    )
    from jupyter_gpuprof.analysis.rank_loading import load_ranks
    from jupyter_gpuprof.analysis.rank_summary import summarize_rank
    from jupyter_gpuprof.analysis.summary import analyze
    from jupyter_gpuprof.analysis.trace import load_trace

    base = _tree_rss_bytes(os.getpid())
    files = folder_rank_summaries(paths[0].parent / SUMMARIES) if mode == "files" else []
    t0 = time.perf_counter()
    with PeakSampler() as s:
        if mode == "all-traces":
            traces = [load_trace(p) for p in paths]
            done = [(a, summarize_rank(t, a, i)) for i, t in enumerate(traces)
                    for a in [analyze(t)]]
        elif mode == "files":
            done = [(None, x) for x in read_rank_summaries(files)]
        else:
            done = load_ranks(paths, workers=1 if mode == "serial" else workers,
                              keep_analysis=mode != "pool-summaries")
        t_load = time.perf_counter() - t0
        d = analyze_ranks([x for _, x in done])
    wall = time.perf_counter() - t0
    me, kids = own_peak_mb(), s.child_peak / 2**20
    if mode == "pool-summaries":  # for the files mode, after the measurement
        out = paths[0].parent / SUMMARIES
        out.mkdir(exist_ok=True)
        for _, x in done:
            write_rank_summary(x, out / f"trace.rank{x.rank}.rank-summary.json.gz")
    slow = d.slowest()
    shifts = rank_shifts(len(paths), skew_us)
    got = d.ranks.set_index("rank")["clock_offset_us"]
    offset_err = max(abs(float(got.loc[r]) - (shifts[r] - shifts[0])) for r in got.index)
    analyses = [a for a, _ in done if a is not None]
    return {
        "mode": mode, "ranks": len(paths),
        "workers": workers if mode in ("pool", "pool-summaries") else 1,
        "wall_s": round(wall, 2), "load_s": round(t_load, 2),
        "cross_rank_s": round(wall - t_load, 3),
        "parent_peak_mb": round(me), "worker_peak_mb": round(kids) if kids else None,
        "tree_peak_mb": round(s.peak / 2**20), "start_rss_mb": round(base / 2**20),
        "summary_kb_per_rank": round(len(pickle.dumps([x for _, x in done])) / len(paths) / 1024),
        "analysis_kb_per_rank": round(len(pickle.dumps(analyses)) / len(paths) / 1024)
        if analyses else 0,
        "summary_file_kb_per_rank": round(sum(f.stat().st_size for f in files) / len(files) / 1024)
        if files else None,
        "matched": d.n_matched, "slowest_rank": int(slow["rank"]) if slow is not None else None,
        "slowest_extra_ms": round(float(slow["extra_ms"]), 2) if slow is not None else None,
        "clock_offset_max_error_us": round(offset_err, 1),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", type=Path, action="append", required=True,
                   help="a real rank trace to copy (repeatable; cycled over the ranks)")
    p.add_argument("--straggler-source", type=Path, default=None,
                   help="a real slower rank's trace: rank --straggler-rank is a copy of it")
    p.add_argument("--straggler-rank", type=int, default=None,
                   help="which rank is the straggler (default: two thirds of the way)")
    p.add_argument("--skew-us", type=float, default=500.0,
                   help="random clock skew per rank, up to this many µs (seeded)")
    p.add_argument("--ranks", type=str, default="8", help="rank count(s), e.g. 8,32,128,256")
    p.add_argument("--json-out", type=Path, default=None, help="write every mode's figures")
    p.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # internal: one mode
    p.add_argument("--folder", type=Path, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.measure:
        paths = sorted(args.folder.glob("trace.rank*.json.gz"),
                       key=lambda x: int(x.name.split(".")[1][4:]))
        print(json.dumps(measure(args.measure, paths, args.workers, args.skew_us)))
        return
    results = []
    for n in (int(x) for x in args.ranks.split(",")):
        results += run_ranks(args, n)
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1) + "\n")


def run_ranks(args: argparse.Namespace, n: int) -> list[dict]:
    """Make an n-rank run and measure each mode on it in a fresh process."""
    straggler_rank = (2 * n // 3 if args.straggler_rank is None else args.straggler_rank) \
        if args.straggler_source else -1
    found = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        paths = make_ranks(args.source, n, folder, args.straggler_source, straggler_rank,
                           args.skew_us)
        size = sum(x.stat().st_size for x in paths)
        print(f"made {len(paths)} rank traces ({size / 2**20:.1f} MB gzipped) in "
              f"{time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs; straggler: rank "
              f"{straggler_rank if straggler_rank >= 0 else 'none'}", flush=True)
        for mode in args.modes.split(","):
            cmd = [sys.executable, __file__, "--source", str(args.source[0]), "--measure", mode,
                   "--folder", str(folder), "--workers", str(args.workers),
                   "--skew-us", str(args.skew_us)]
            repo = str(Path(__file__).resolve().parent.parent)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                x for x in (repo, os.environ.get("PYTHONPATH", "")) if x)}
            res = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            if res.returncode:
                print(f"{mode}: failed: {res.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            row = json.loads(res.stdout.strip().splitlines()[-1])
            row["straggler_rank"] = straggler_rank if straggler_rank >= 0 else None
            row["traces_mb_gz"] = round(size / 2**20, 1)
            found.append(row)
            print(json.dumps(row), flush=True)
    return found


if __name__ == "__main__":
    main()
