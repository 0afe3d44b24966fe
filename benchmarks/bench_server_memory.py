"""The server's memory under one hostile or huge file of a shared runs folder, before and after
the caps (docs/benchmarks.md, section 22): peak RSS and time of each case in a fresh process.

"before" runs the same code with its bound lifted (the inflate cap raised past the bomb, the
bootstrap resampling every step, the timeline re-parsing the trace per request), which is what
the code did before the caps; "after" is the shipped default. Printed as a table with ratios.

    python benchmarks/bench_server_memory.py [--bomb-mb 2048] [--steps 50000] [--events 600000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))


def make_bomb(path: Path, mb: int) -> None:
    """A gzip of `mb` MB of spaces inside a trace's brackets (~1,000:1)."""
    c = zlib.compressobj(9, wbits=31)
    with open(path, "wb") as f:
        f.write(c.compress(b'{"traceEvents": ['))
        block = b" " * (1 << 20)
        for _ in range(mb):
            f.write(c.compress(block))
        f.write(c.compress(b"]}") + c.flush())


def make_run(root: Path, events: int) -> str:
    """A run folder whose synthetic trace holds about `events` events over 20 steps."""
    from runs_fixtures import write_meta
    from tracebuilder import TraceBuilder

    run_id = "20261129-120000-big"
    folder = root / run_id
    write_meta(folder, baseline={"step_ms": [10.0] * 20, "timing": "cuda_event"})
    b = TraceBuilder()
    per_step = max(1, events // 20 // 3)  # an op, its launch and its kernel each
    for s in range(20):
        t0 = s * (per_step * 12.0 + 100)
        b.step(s, t0, per_step * 12.0 + 50)
        for k in range(per_step):
            t = t0 + 10 + k * 12.0
            ext = b.op("aten::mm", t, 8.0)
            b.kernel(f"gemm_{k % 50}", t + 1, t + 5, 6.0, ext=ext)
    b.write(folder / "trace.json.gz")
    return run_id


def case(name: str, mode: str, arg: str) -> None:
    """One case in this process (called in a child): prints its seconds."""
    t = time.perf_counter()
    if name == "bomb":
        from jupyter_gpuprof.analysis import tracefile

        cap = None if mode == "after" else 1 << 40
        try:
            tracefile.read_trace_bytes(Path(arg), max_bytes=cap)
        except tracefile.TraceError:
            pass
    elif name == "compare":
        import numpy as np

        from jupyter_gpuprof.analysis import compare

        if mode == "before":
            compare.MAX_BOOTSTRAP_STEPS = None  # type: ignore[assignment]
            compare.BOOTSTRAP_BATCH = compare.N_BOOTSTRAP
            compare.bootstrap_median_diff_ci.__defaults__ = (
                compare.N_BOOTSTRAP, compare.CONFIDENCE, compare.SEED, None)
        rng = np.random.default_rng(0)
        steps = rng.normal(100.0, 2.0, int(arg))
        compare.step_change(steps, steps * 0.99)
    else:
        from jupyter_gpuprof.report import timeline_step
        from jupyter_gpuprof.store.runs import RunStore

        root, run_id = arg.split("::")
        run = RunStore(root).get(run_id)
        fn = timeline_step.run_step_timeline if mode == "before" \
            else timeline_step.cached_step_timeline
        threads = [threading.Thread(target=fn, args=(run, s)) for s in (3, 7, 11, 15)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    print(json.dumps({"s": time.perf_counter() - t, "mb": peak_mb()}))


def peak_mb() -> float:
    """This process's peak RSS: VmHWM, which starts afresh at exec (ru_maxrss keeps the
    forking parent's peak, here the trace builder's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(name: str, mode: str, arg: str) -> tuple[float, float]:
    """(seconds, peak RSS in MB) of one case in a fresh process."""
    out = subprocess.run([sys.executable, __file__, "--case", name, mode, arg],
                         capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["s"], got["mb"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bomb-mb", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=50_000)
    ap.add_argument("--events", type=int, default=600_000)
    ap.add_argument("--case", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.case:
        case(*a.case)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        bomb = Path(tmp) / "bomb.json.gz"
        make_bomb(bomb, a.bomb_mb)
        root = Path(tmp) / "runs"
        run_id = make_run(root, a.events)
        cases = [("compare", str(a.steps), f"{a.steps:,} step times a side"),
                 ("timeline", f"{root}::{run_id}", f"4 parallel /timeline, ~{a.events:,} "
                  "events"),
                 ("bomb", str(bomb), f"{bomb.stat().st_size / 1e6:.1f} MB gzip -> "
                  f"{a.bomb_mb} MB")]
        rows = []
        for name, arg, what in cases:
            s_after, mb_after = measure(name, "after", arg)
            s_before, mb_before = measure(name, "before", arg)
            rows.append((what, s_before, mb_before, s_after, mb_after))
    print(f"{'case':<40} {'before s':>9} {'MB':>7} {'after s':>8} {'MB':>7} "
          f"{'time x':>7} {'RSS x':>6}")
    for what, sb, mb, sa, ma in rows:
        print(f"{what:<40} {sb:9.2f} {mb:7.0f} {sa:8.2f} {ma:7.0f} {sb / sa:7.1f} "
              f"{mb / ma:6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
