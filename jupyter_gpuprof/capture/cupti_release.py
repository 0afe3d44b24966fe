"""CUPTI let go once the profiler stops, so the training after the capture runs at its own speed.

Kineto leaves CUPTI attached after a trace unless `TEARDOWN_CUPTI=1` (pytorch/pytorch#144455,
read when the profiler stops): every later launch then pays CUPTI's callbacks. On the H200 the
word-level LM's steps after our capture ran 14 % slower than the same process's steps before
it (`benchmarks/corpus/observer_causes.py`, within-process pairs). Teardown is asked for only
where it is safe: CUDA 12.6 or later (earlier ones crash re-initialising CUPTI after a teardown
once CUDA graphs ran), no CUDA graph replayed in this process, and nobody chose already
(`torch.compile(mode="reduce-overhead")` sets it to 0 itself).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

#: the variable Kineto reads when a trace stops
TEARDOWN = "TEARDOWN_CUPTI"
#: the first CUDA whose CUPTI re-initialises safely after a teardown with CUDA graphs in use
SAFE_CUDA = (12, 6)


def _cuda_version(text: str | None) -> tuple[int, int] | None:
    """"12.6" -> (12, 6); None when torch has no CUDA build or the text is not a version."""
    if not text:
        return None
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


def teardown_decision(cuda: str | None, graph_replays: int,
                      env: MutableMapping[str, str]) -> str | None:
    """Why CUPTI stays attached after this capture, or None when it is let go."""
    if TEARDOWN in env:
        return f"{TEARDOWN}={env[TEARDOWN]} was already set"
    version = _cuda_version(cuda)
    if version is None:
        return "no CUDA build"
    if version < SAFE_CUDA:
        return f"CUDA {cuda} (teardown is safe from 12.6)"
    if graph_replays:
        return "CUDA graphs replayed in this process"
    return None


def release_cupti_on_stop(graph_replays: int = 0,
                          env: MutableMapping[str, str] | None = None) -> str | None:
    """Ask Kineto to tear CUPTI down when the coming trace stops, where that is safe; returns
    why it was not asked (None when it was)."""
    import torch

    target = os.environ if env is None else env
    why = teardown_decision(torch.version.cuda, graph_replays, target)
    if why is None:
        target[TEARDOWN] = "1"
    return why
