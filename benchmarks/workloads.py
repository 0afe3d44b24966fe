"""Training-step workloads with one deliberate bottleneck each.

Every builder takes ``device`` (``"cuda"`` or ``"cpu"``) and returns a :class:`Workload`
whose ``step()`` runs one training step (or one step of the loop the bottleneck lives in).
They are small enough to build in a few seconds and are seeded, so two runs launch the same
kernels in the same order (timings still vary).

The *intended* bottleneck is a design intent only: ``capture_workloads.py`` measures where
the time really goes and stores that next to the trace (``ground_truth`` in ``meta.json``).

    python benchmarks/workloads.py            # list them
    python benchmarks/workloads.py launch 3   # build one and run 3 steps (CPU works too)

Builders live by theme: host-side bottlenecks in ``workloads_host.py``, GPU-kernel ones in
``workloads_gpu.py``, the shared ``Workload`` record and helpers in ``workload_base.py``; this
module is the registry every script imports (``from workloads import build, Workload, _seed``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import torch
from workload_base import Workload, _mm_dtype, _py_work, _seed, _set_fp32_matmul
from workloads_gpu import (
    build_compute,
    build_launch,
    build_memory,
    build_precision,
    graph_whole_step,
)
from workloads_host import build_host, build_input, build_sync, build_transfer

__all__ = [
    "BUILDERS", "SHRINK", "Workload", "_mm_dtype", "_py_work", "_seed", "_set_fp32_matmul",
    "build", "graph_whole_step",
]

BUILDERS: dict[str, Callable[..., Workload]] = {
    "input": build_input,
    "sync": build_sync,
    "launch": build_launch,
    "precision": build_precision,
    "compute": build_compute,
    "memory": build_memory,
    "transfer": build_transfer,
    "host": build_host,
}


# smaller variants, used when a captured trace comes out over the size budget
SHRINK: dict[str, dict] = {"launch": {"blocks": 24}, "sync": {"layers": 6}, "input": {"batch": 8}}


def build(name: str, device: str, shrink: bool = False, fixed: bool = False) -> Workload:
    """Build a workload; ``fixed=True`` applies its intended fix (NotImplementedError if none)."""
    kw = dict(SHRINK.get(name, {})) if shrink else {}
    if fixed:
        kw["fixed"] = True
    return BUILDERS[name](device, **kw)


def _main(argv: list[str]) -> None:
    """The command line: list the workloads, or build one and time a few of its steps."""
    if not argv:
        for name in BUILDERS:
            print(name)
        return
    name, n = argv[0], int(argv[1]) if len(argv) > 1 else 3
    device = "cuda" if torch.cuda.is_available() else "cpu"
    t0 = time.perf_counter()
    w = build(name, device)
    print(f"{w.name}: built in {time.perf_counter() - t0:.2f}s on {device}: {w.description}")
    for _ in range(n):
        t0 = time.perf_counter()
        w.step()
        if device == "cuda":
            torch.cuda.synchronize()
        print(f"  step {1e3 * (time.perf_counter() - t0):.2f} ms")


if __name__ == "__main__":
    _main(sys.argv[1:])
