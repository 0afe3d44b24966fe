"""What one capture learns about the training itself: what a step is, micro-batches, graphs.

A cell or script that trains through a framework hides its loop; these counters see through it
with hooks that every framework goes through: torch's global optimizer step hooks (the caller
passes each step in), `torch.autograd.backward` (every `loss.backward()`, scaled or not, ends
there) and `CUDAGraph.replay` (CUDA graphs captured by hand or by torch.compile's
"reduce-overhead"). Each costs one Python call per event, so the baseline stays honest.

A step is one step of the first optimizer that steps (a GAN's iteration steps two: both are
counted per step); several backward calls inside `optimizer.step` are a closure's evaluations
(LBFGS), not micro-batches (one is the step's own: a framework's closure); a loop that calls
no optimizer at all (parameters updated by hand) steps at each `backward()` once
`BACKWARD_STEPS_AFTER` of them came without an optimizer step.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from collections.abc import Callable
from typing import Any

from ..store.meta_blocks import TrainingMeta
from .capture_cost import COST
from .optimizer_hooks import BEFORE_STEP


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


#: backward() calls with no optimizer step after which a loop is taken to step at each backward
BACKWARD_STEPS_AFTER = 8
#: how the steps were found (meta.json `training.steps_by`)
BY_OPTIMIZER, BY_BACKWARD = "optimizer.step()", "backward()"


class TrainingCounters:
    """What marks a step, and per step: backward calls, optimizers, closure evaluations."""

    def __init__(self, on_backward_step: Callable[[], None] | None = None) -> None:
        """`on_backward_step`: called at each backward() once the loop steps by backward."""
        self.optimizer_steps = 0
        self.backward_steps = 0
        self.steps_by: str | None = None
        self.micro_batches: list[int] = []  # backward calls outside optimizer.step, per step
        self.optimizers: list[int] = []  # distinct optimizers that stepped, per step
        self.closures: list[int] = []  # backward calls inside optimizer.step, per step
        self.graph_replays = 0
        self.on_backward_step = on_backward_step
        self._backwards = 0
        self._closure = 0
        self._in_step = 0
        self._stepped: set[int] = set()
        self._undo: list[Callable[[], object]] = []
        self._paused = False  # the timed steps: only their number is counted (pause())
        self._unwrap_backward: Callable[[], bool] | None = None
        self._unhook_step: Callable[[], None] | None = None

    def install(self) -> None:
        """Wrap backward and CUDAGraph.replay, watch optimizer steps, for the capture."""
        import torch

        self._watch()
        graph_cls = getattr(torch.cuda, "CUDAGraph", None)
        if graph_cls is not None and torch.cuda.is_available():
            # A build whose CUDAGraph is a C type cannot be wrapped: replays go uncounted.
            with contextlib.suppress(TypeError, AttributeError):
                self._undo.append(self._wrap(graph_cls, "replay", self._count_replay))

    def _watch(self) -> None:
        """The per-step counting: the backward wrapper and the callback before each step."""
        import torch

        if self._unwrap_backward is None:
            self._unwrap_backward = self._wrap(torch.autograd, "backward",
                                               self._count_backward, self._backward_ended)
        if self._unhook_step is None:
            self._unhook_step = BEFORE_STEP.add(self._enter_step)

    def _unwatch(self) -> None:
        if self._unhook_step is not None:
            self._unhook_step()
            self._unhook_step = None
        if self._unwrap_backward is not None and self._unwrap_backward():
            self._unwrap_backward = None  # (else wrapped over since: ours stays, harmless)

    def pause(self) -> None:
        """The baseline's steps are the timed ones, and a loop that steps by its optimizer
        needs no per-step counting there: its counts come from the other steps (warm-up,
        trace), so the backward wrapper and the callback before each step go out until
        resume(); only the steps' number is kept. A loop stepping by backward() keeps them:
        there they mark the steps."""
        if self.steps_by == BY_OPTIMIZER and not self._paused:
            self._paused = True
            self._unwatch()

    def resume(self) -> None:
        """Count per step again, from the step that begins now (called at a step boundary)."""
        if self._paused:
            self._paused = False
            self._backwards = self._closure = self._in_step = 0
            self._stepped = set()
            self._watch()

    def _wrap(self, owner: Any, attr: str, counter: Callable[[], bool | None],
              after: Callable[[], None] | None = None) -> Callable[[], bool]:
        """`owner.attr` counted: `counter` runs before each call, and where it returns true,
        `after` once the call has returned (a step ends there). The usual call pays two clock
        reads and one charge around the wrapped work, nothing more. Returns what puts the
        original back (false where somebody wrapped on top since: theirs is not dropped)."""
        original = getattr(owner, attr)

        now, cost = time.perf_counter_ns, COST

        @functools.wraps(original)
        def counted(*args: Any, **kwargs: Any) -> Any:
            t0 = now()
            ends = counter()
            t1 = now()
            out = original(*args, **kwargs)
            if not (ends and after):
                cost.add(t1 - t0)  # our part of the call, never the wrapped work
                return out
            t2 = now()
            after()
            t3, began = now(), cost._event_ns
            # an `after` that started a phase charges that phase only what came after it began
            cost.add(t1 - t0 + t3 - t2 if began <= t2 else t3 - began)
            return out

        setattr(owner, attr, counted)

        def undo() -> bool:
            # Restore only if nobody wrapped on top of us since (else we would drop their wrapper).
            if getattr(owner, attr) is counted:
                setattr(owner, attr, original)
                return True
            return False

        return undo

    def _count_backward(self) -> bool:
        """Count a backward() as it begins; true when it ends a step (a loop stepping by it)."""
        if self._in_step:  # inside optimizer.step: a closure re-evaluating the loss (LBFGS)
            self._closure += 1
            return False
        self._backwards += 1
        if (self.steps_by is None and self.optimizer_steps == 0
                and self._backwards >= BACKWARD_STEPS_AFTER):
            self.steps_by = BY_BACKWARD  # parameters updated by hand: no optimizer steps
        if self.steps_by == BY_BACKWARD:
            self.backward_steps += 1
            self.micro_batches.append(1)
            return True
        return False

    def _backward_ended(self) -> None:
        """A loop stepping by backward() ends its step once the backward has run (not as it
        begins: the step's backward belongs to it, and so does the capture's range around it)."""
        if self.on_backward_step is not None:
            self.on_backward_step()

    def _count_replay(self) -> None:
        self.graph_replays += 1

    def _enter_step(self, *_: Any) -> None:
        self._in_step += 1

    def on_optimizer_step(self, optimizer_id: int = 0, counted: bool = True) -> None:
        """After any optimizer's step; `counted`: it is the optimizer whose steps are steps."""
        if self._paused:
            if counted:
                self.optimizer_steps += 1
            return
        self._in_step = max(0, self._in_step - 1)
        self._stepped.add(optimizer_id)
        if not counted or self.steps_by == BY_BACKWARD:
            return
        self.steps_by = BY_OPTIMIZER
        self.optimizer_steps += 1
        if self.optimizer_steps > 1:  # backward calls before the first step include set-up
            # one backward inside the step is the step's own (Lightning runs each micro-batch's
            # forward and backward in the closure it hands to optimizer.step); several are a
            # closure re-evaluating the loss (LBFGS)
            inside = self._closure
            self.micro_batches.append(self._backwards + (inside if inside <= 1 else 0))
            self.closures.append(inside if inside > 1 else 0)
            self.optimizers.append(len(self._stepped))
        self._backwards = self._closure = 0
        self._stepped = {optimizer_id}

    def steps(self) -> int:
        """Steps seen so far, however they are marked."""
        return self.backward_steps if self.steps_by == BY_BACKWARD else self.optimizer_steps

    def remove(self) -> None:
        """Put back what install() wrapped."""
        self._unwatch()
        self._paused = False
        while self._undo:
            self._undo.pop()()

    def to_meta(self) -> TrainingMeta:
        """The `training` block of meta.json."""
        return {
            "optimizer_steps": self.optimizer_steps,
            "steps_by": self.steps_by,
            "backward_steps": self.backward_steps,
            "micro_batches_per_step": _median(self.micro_batches),
            "optimizers_per_step": _median(self.optimizers),
            "closure_evaluations_per_step": _median(self.closures),
            "cuda_graph_replays": self.graph_replays,
            "compiled_graphs": compiled_graphs(),  # torch.compile in use in this process
        }
