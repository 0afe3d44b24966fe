"""The allocator histories recorded on the H200 (tests/data/memory) and their measured truth."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from paths import TESTS

from jupyter_gpuprof.analysis.memory_history import MemoryHistory, load_history

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


def within(value: float, expected: float, pct: float) -> bool:
    return abs(value - expected) <= pct / 100 * abs(expected)
