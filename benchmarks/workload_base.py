"""What every benchmark workload is made of: the `Workload` record and the seeding and precision
helpers their builders share (workloads.py re-exports them for its importers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch


@dataclass
class Workload:
    """One training step built around one bottleneck, and what meta.json records about it."""

    name: str
    step: Callable[[], None]
    description: str
    intended: str
    # free-form facts about the build (shapes, dtypes) that end up in meta.json
    config: dict = field(default_factory=dict)
    # for a variant built with fixed=True: what was changed (the intended fix)
    fix: str | None = None


def _seed(seed: int = 0) -> None:
    """Seed torch and numpy, so two builds launch the same kernels in the same order."""
    torch.manual_seed(seed)
    np.random.seed(seed)


def _py_work(n: int) -> int:
    """Deterministic pure-Python busy work (~0.1-0.15 us per iteration on a current x86 core)."""
    acc = 0
    for k in range(n):
        acc = (acc * 31 + k) % 1_000_003
    return acc


def _mm_dtype(device: str) -> torch.dtype:
    """The GEMM dtype of the bf16 workloads."""
    # bf16 on the GPU; on CPU too (slow but it runs) so the CPU dry run builds the same graph
    return torch.bfloat16


def _set_fp32_matmul(ieee: bool) -> None:
    """Full fp32 GEMMs (SIMT sgemm, ``allow_tf32=False``) or TF32, on old and new torch."""
    import warnings

    matmul = torch.backends.cuda.matmul
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch >= 2.9 calls the flag legacy
            matmul.allow_tf32 = not ieee
    except Exception:  # pragma: no cover - only the new API left
        matmul.fp32_precision = "ieee" if ieee else "tf32"

