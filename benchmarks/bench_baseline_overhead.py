"""Overhead of %%gpuprofile's baseline pass against a plain loop timed the same way.

Both sides time each step with a CUDA event recorded at every step boundary on the current
stream (one synchronize at the end), so they measure the same thing; the only difference is
the capture machinery (step driver, hooks) around the user's step. Rounds alternate the order.
    python benchmarks/bench_baseline_overhead.py [--workloads launch,compute] [--steps 50]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from workloads import build  # noqa: E402

from jupyter_gpuprof.capture.session import ProfileSession  # noqa: E402
from jupyter_gpuprof.capture.settings import CaptureSettings  # noqa: E402
from jupyter_gpuprof.store import RunStore  # noqa: E402


def plain_loop(step, n: int) -> list[float]:
    """Step times (ms) of a bare loop with a CUDA event at each boundary."""
    events = [torch.cuda.Event(enable_timing=True) for _ in range(n + 1)]
    events[0].record()
    for i in range(n):
        step()
        events[i + 1].record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) for a, b in zip(events, events[1:], strict=False)]


def gpuprof_baseline(step, n: int, root: Path) -> list[float]:
    """Baseline step times (ms) measured by the %%gpuprofile session in body mode."""
    settings = CaptureSettings(steps=n, warmup=0, wait=0, prof_warmup=0, active=1,
                               record_shapes=False, profile_memory=False, count_flops=False,
                               mode="body")
    session = ProfileSession(settings, name="overhead", store=RunStore(root)).begin()
    try:
        session.run_steps(step)
    finally:
        run = session.finish(None)
    return list(run.meta.baseline["step_ms"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--workloads", default="launch,compute,sync")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--json", default=None, help="write the results here")
    args = p.parse_args()
    root = Path(tempfile.mkdtemp())
    results = {}
    for name in args.workloads.split(","):
        w = build(name, "cuda")
        for _ in range(5):
            w.step()
        torch.cuda.synchronize()
        plain, ours = [], []
        for r in range(args.rounds):
            order = [plain_loop, None] if r % 2 == 0 else [None, plain_loop]
            for fn in order:
                if fn is plain_loop:
                    plain.append(statistics.median(plain_loop(w.step, args.steps)))
                else:
                    ours.append(statistics.median(gpuprof_baseline(w.step, args.steps, root)))
        ratio = statistics.median(o / q for o, q in zip(ours, plain, strict=True))
        results[name] = {"plain_median_ms": statistics.median(plain),
                         "gpuprof_median_ms": statistics.median(ours),
                         "ratio": ratio, "overhead_pct": 100 * (ratio - 1),
                         "rounds": args.rounds, "steps": args.steps,
                         "plain_round_medians": plain, "gpuprof_round_medians": ours}
        print(f"{name:10s} plain {statistics.median(plain):8.3f} ms  gpuprof baseline "
              f"{statistics.median(ours):8.3f} ms  overhead {100 * (ratio - 1):+.2f} %")
    info = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "results": results}
    if args.json:
        Path(args.json).write_text(json.dumps(info, indent=1))


if __name__ == "__main__":
    main()
