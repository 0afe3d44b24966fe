"""What one step-boundary mark of the baseline clock costs the host, beside what it is made of.

    python benchmarks/bench_clock_mark.py [--calls 5000] [--json F]

The capture ends each baseline step with a mark on its clock (capture/driver.py): a CUDA event
recorded on the steps' stream. On a host whose step is a millisecond, a mark of tens of
microseconds is a few percent of the step the user pays for (docs/benchmarks.md §21). This
times each candidate mark in a tight loop (the mean of `--calls` calls, median of 7 repeats)
next to the host's plain costs: a clock read, a system call, a GIL release, a tiny kernel
launch. On a machine without CUDA it times the host pieces only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def per_call_us(fn: Callable[[], Any], calls: int) -> float:
    """Median over 7 repeats of the mean time of one call, in µs."""
    for _ in range(min(calls, 500)):
        fn()
    runs = []
    for _ in range(7):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter_ns() - t0) / calls / 1e3)
    return statistics.median(runs)


def candidates(calls: int) -> dict[str, Callable[[], Any]]:
    """Each thing timed, by name; the CUDA ones only where CUDA is."""
    out: dict[str, Callable[[], Any]] = {
        "perf_counter_ns": time.perf_counter_ns,
        "getppid (a system call)": os.getppid,
        "sleep(0) (GIL released, timer slack)": lambda: time.sleep(0),
    }
    import torch

    if not torch.cuda.is_available():
        return out
    from jupyter_gpuprof.capture.driver import CudaEventClock

    stream = torch.cuda.current_stream()
    x = torch.zeros(1, device="cuda")
    n = calls * 8 + 1000

    def pool(timing: bool) -> Callable[[], Any]:
        made = [torch.cuda.Event(enable_timing=timing) for _ in range(n)]
        for ev in made:
            ev.record(stream)  # torch creates the CUDA event at its first record
        torch.cuda.synchronize()
        return lambda: made.pop().record(stream)

    clock = CudaEventClock(n)
    out.update({
        "current_stream()": torch.cuda.current_stream,
        "tiny kernel launch (x.add_(1))": lambda: x.add_(1),
        "timing event, record(stream)": pool(True),
        "timing event, record()": (lambda p: lambda: p.pop().record())(
            [torch.cuda.Event(enable_timing=True) for _ in range(n)]),
        "plain event, record(stream)": pool(False),
        "baseline clock mark (CudaEventClock)": clock.mark,
    })
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    got = {}
    for name, fn in candidates(args.calls).items():
        got[name] = round(per_call_us(fn, args.calls), 3)
        print(f"{name:40} {got[name]:9.3f} µs", flush=True)
    if args.json:
        args.json.write_text(json.dumps(got, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
