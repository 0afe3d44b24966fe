"""What one capture learns about the training itself: optimizer steps, micro-batches, graphs.

A cell or script that trains through a framework hides its loop; these counters see through it
with hooks that every framework goes through: torch's global optimizer step hook (the caller
passes each step in), `torch.autograd.backward` (every `loss.backward()`, scaled or not, ends
there) and `CUDAGraph.replay` (CUDA graphs captured by hand or by torch.compile's
"reduce-overhead"). Each costs one Python call per event, so the baseline stays honest.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable
from typing import Any


def _median(values: list[int]) -> float | None:
    if not values:
        return None
    v = sorted(values)
    mid = len(v) // 2
    return float(v[mid]) if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def compiled_graphs() -> int:
    """Graphs torch.compile has built in this process so far (0 when dynamo was never used)."""
    dynamo_utils = sys.modules.get("torch._dynamo.utils")
    if dynamo_utils is None:
        return 0
    try:
        return int(dynamo_utils.counters["stats"]["unique_graphs"])
    except (AttributeError, KeyError, TypeError, ValueError):
        return 0


class TrainingCounters:
    """Optimizer steps, backward calls between them, CUDA graph replays, during one capture."""

    def __init__(self) -> None:
        self.optimizer_steps = 0
        self.micro_batches: list[int] = []  # backward calls per optimizer step
        self.graph_replays = 0
        self._backwards = 0
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        """Wrap backward and CUDAGraph.replay for the capture's duration."""
        import torch

        self._wrap(torch.autograd, "backward", self._count_backward)
        graph_cls = getattr(torch.cuda, "CUDAGraph", None)
        if graph_cls is not None and torch.cuda.is_available():
            # A build whose CUDAGraph is a C type cannot be wrapped: replays go uncounted.
            with contextlib.suppress(TypeError, AttributeError):
                self._wrap(graph_cls, "replay", self._count_replay)

    def _wrap(self, owner: Any, attr: str, counter: Callable[[], None]) -> None:
        original = getattr(owner, attr)

        @functools.wraps(original)
        def counted(*args: Any, **kwargs: Any) -> Any:
            counter()
            return original(*args, **kwargs)

        setattr(owner, attr, counted)

        def undo() -> None:
            # Restore only if nobody wrapped on top of us since (else we would drop their wrapper).
            if getattr(owner, attr) is counted:
                setattr(owner, attr, original)

        self._undo.append(undo)

    def _count_backward(self) -> None:
        self._backwards += 1

    def _count_replay(self) -> None:
        self.graph_replays += 1

    def on_optimizer_step(self) -> None:
        """One optimizer step of the counted optimizer: close its micro-batch count."""
        self.optimizer_steps += 1
        if self.optimizer_steps > 1:  # backward calls before the first step include set-up
            self.micro_batches.append(self._backwards)
        self._backwards = 0

    def remove(self) -> None:
        """Put back what install() wrapped."""
        while self._undo:
            self._undo.pop()()

    def to_meta(self) -> dict[str, Any]:
        """The `training` block of meta.json."""
        return {
            "optimizer_steps": self.optimizer_steps,
            "micro_batches_per_step": _median(self.micro_batches),
            "cuda_graph_replays": self.graph_replays,
            "compiled_graphs": compiled_graphs(),  # torch.compile in use in this process
        }
