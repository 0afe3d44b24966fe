"""The allocator histories recorded on the H200 (tests/data/memory) and their measured truth."""

from __future__ import annotations

import gzip
import json
from functools import cache
from typing import Any

import numpy as np
import torch
from paths import TESTS

from jupyter_gpuprof.analysis.memory_history import MemoryHistory, load_history
from jupyter_gpuprof.analysis.recompute_time import ForwardKernels, StepKernels

MEMORY = TESTS / "data" / "memory"


@cache
def history(case: str) -> MemoryHistory:
    return load_history(MEMORY / f"{case}.snapshot.json.gz")


@cache
def truth(case: str) -> dict[str, Any]:
    return dict(json.loads((MEMORY / f"{case}.truth.json").read_text()))


def known(
    case: str, kinds: tuple[str, ...] = ("parameters", "optimizer_state")
) -> dict[str, list[tuple[int, int]]]:
    """The addresses the capture would walk live (parameters and state are alive at the end)."""
    return {k: [(int(p), int(b)) for p, b in truth(case)["addresses"][k]] for k in kinds}


def captured(case: str) -> dict[str, list[tuple[int, int]]]:
    """The addresses a capture saved in its own history file (the acceptance's run folders)."""
    raw = _snapshot(case)["jupyter_gpuprof"]["addresses"]
    return {k: [(int(p), int(b)) for p, b in v] for k, v in raw.items()}


def one_kernel_forward(ms: float) -> ForwardKernels:
    """A forward of one kernel taking `ms` (repeating nothing: checkpointing priced by share)."""
    return ForwardKernels([StepKernels(["k"], np.array([ms * 1e3]), np.array([0.0]))], 1.0, True)


def within(value: float, expected: float, pct: float) -> bool:
    return abs(value - expected) <= pct / 100 * abs(expected)


def _snapshot(case: str) -> dict[str, Any]:
    return dict(json.loads(gzip.decompress((MEMORY / f"{case}.snapshot.json.gz").read_bytes())))


class FakeApi:
    """The allocator as a CUDA process would show it, from a recorded snapshot."""

    def __init__(self, case: str = "gpt2", cuda: bool = True) -> None:
        self.case, self.cuda = case, cuda
        self.calls: list[str] = []
        self.observer: Any = None

    def cuda_in_use(self) -> bool:
        return self.cuda

    def record(self, max_entries: int) -> None:
        self.calls.append(f"record {max_entries}")

    def stop(self) -> None:
        self.calls.append("stop")

    def snapshot(self) -> dict[str, Any]:
        self.calls.append("snapshot")
        return _snapshot(self.case)

    def attach_oom_observer(self, observer: Any) -> None:
        self.observer = observer

    def fail(self, requested: int) -> None:
        """What torch's allocator does at a failing allocation: the observer, then the raise."""
        assert self.observer is not None, "no out-of-memory observer attached"
        self.observer(0, requested, 0, 0)
        raise torch.OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {requested} B. "
            "GPU 0 has a total capacity of 8.00 GiB of which 0 B is free."
        )
