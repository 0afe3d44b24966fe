"""Memory and time of analysing an N-rank run: worker pool with compact summaries vs the rest.

Makes N synthetic rank traces by copying real ones (cycling through the `--source` files),
shifting each copy's clock by a few microseconds and writing its rank into `distributedInfo`,
then measures, each mode in a fresh process:

- ``pool``: `load_ranks(paths, workers=W)`: W spawned workers parse and analyse one trace at a
  time and return only its `Analysis` + `RankSummary` (the report's path for big runs);
- ``serial``: the same, in one process, one trace at a time;
- ``all-traces``: every rank's parsed event table held at once, as loaders that build one
  cross-rank table do (for comparison: this is what needs N times one rank's memory).

Peak memory is the peak of the summed resident memory of the measuring process and all its
descendants, sampled every 20 ms (so the pool's workers count). Then the cross-rank analysis
runs on the summaries and its verdict is printed.

    python benchmarks/bench_multirank.py --ranks 8 \\
        --source tests/data/real/ddp2_heavy1/trace.rank0.json.gz \\
        --source tests/data/real/ddp2_heavy1/trace.rank1.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MODES = ("pool", "serial", "all-traces")
SHIFT_US = 37.0  # clock skew added per rank: small against a step, as on one host


def make_ranks(sources: list[Path], n: int, folder: Path) -> list[Path]:
    """N rank traces: copies of `sources` (cycled), clocks shifted, rank numbers rewritten."""
    docs = [json.loads(gzip.decompress(p.read_bytes())) for p in sources]
    out = []
    for r in range(n):
        doc = docs[r % len(docs)]
        shift = SHIFT_US * r
        events = [dict(e, ts=e["ts"] + shift) if "ts" in e else e for e in doc["traceEvents"]]
        info = dict(doc.get("distributedInfo") or {}, rank=r, world_size=n)
        path = folder / f"trace.rank{r}.json.gz"
        path.write_bytes(gzip.compress(json.dumps(
            {**doc, "traceEvents": events, "distributedInfo": info}).encode(), 1))
        out.append(path)
    return out


def _tree_rss_bytes(root: int) -> int:
    """Resident memory of `root` and every descendant process (Linux /proc)."""
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
    return sum(rss.get(p, 0) for p in tree)


class PeakSampler:
    """Samples this process tree's summed RSS in a thread; `.peak` in bytes."""

    def __init__(self, period_s: float = 0.02) -> None:
        self.period_s, self.peak, self._stop = period_s, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))
            time.sleep(self.period_s)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _tree_rss_bytes(os.getpid()))


def measure(mode: str, paths: list[Path], workers: int) -> dict:
    """Run one mode in this process and return its figures."""
    from jupyter_gpuprof.analysis.distributed import analyze_ranks
    from jupyter_gpuprof.analysis.rank_loading import load_ranks
    from jupyter_gpuprof.analysis.rank_summary import summarize_rank
    from jupyter_gpuprof.analysis.summary import analyze
    from jupyter_gpuprof.analysis.trace import load_trace

    base = _tree_rss_bytes(os.getpid())
    t0 = time.perf_counter()
    with PeakSampler() as s:
        if mode == "all-traces":
            traces = [load_trace(p) for p in paths]
            done = [(a, summarize_rank(t, a, i)) for i, t in enumerate(traces)
                    for a in [analyze(t)]]
        else:
            done = load_ranks(paths, workers=workers if mode == "pool" else 1)
        t_load = time.perf_counter() - t0
        d = analyze_ranks([x for _, x in done])
    wall = time.perf_counter() - t0
    slow = d.slowest()
    return {
        "mode": mode, "ranks": len(paths), "workers": workers if mode == "pool" else 1,
        "wall_s": round(wall, 2), "load_s": round(t_load, 2),
        "cross_rank_s": round(wall - t_load, 3),
        "peak_rss_mb": round(s.peak / 2**20), "start_rss_mb": round(base / 2**20),
        "summary_kb_per_rank": round(len(pickle.dumps([x for _, x in done])) / len(paths) / 1024),
        "analysis_kb_per_rank": round(len(pickle.dumps([a for a, _ in done])) / len(paths) / 1024),
        "matched": d.n_matched, "slowest_rank": int(slow["rank"]) if slow is not None else None,
        "slowest_extra_ms": round(float(slow["extra_ms"]), 2) if slow is not None else None,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", type=Path, action="append", required=True,
                   help="a real rank trace to copy (repeatable; cycled over the ranks)")
    p.add_argument("--ranks", type=int, default=8)
    p.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--measure", default=None, help=argparse.SUPPRESS)  # internal: one mode
    p.add_argument("--folder", type=Path, default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.measure:
        paths = sorted(args.folder.glob("trace.rank*.json.gz"),
                       key=lambda x: int(x.name.split(".")[1][4:]))
        print(json.dumps(measure(args.measure, paths, args.workers)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        paths = make_ranks(args.source, args.ranks, folder)
        size = sum(x.stat().st_size for x in paths)
        print(f"made {len(paths)} rank traces ({size / 2**20:.1f} MB gzipped) in "
              f"{time.perf_counter() - t0:.1f} s; {os.cpu_count()} CPUs", flush=True)
        for mode in args.modes.split(","):
            cmd = [sys.executable, __file__, "--source", str(args.source[0]), "--measure", mode,
                   "--folder", str(folder), "--workers", str(args.workers)]
            repo = str(Path(__file__).resolve().parent.parent)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                x for x in (repo, os.environ.get("PYTHONPATH", "")) if x)}
            res = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
            if res.returncode:
                print(f"{mode}: failed: {res.stderr.strip().splitlines()[-1:]}", flush=True)
                continue
            print(res.stdout.strip().splitlines()[-1], flush=True)


if __name__ == "__main__":
    main()
