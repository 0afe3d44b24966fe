"""graphs: `compile` with mode='reduce-overhead', whose CUDA graphs replay the step's launches.

Its graphs replay from one memory pool that torch reuses from what it takes as a new
iteration; a loop with gradient accumulation or several optimizers an iteration must say
where an iteration begins (advice/loop_terms.py: unmarked, the replay of the next micro-batch
overwrote the accumulated gradients on the H200), so the try marks it as the advice says:
after the last optimizer of each iteration steps. A script that compiles its model itself gets
the mode on its own `torch.compile` call, never a second compile.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Mapping
from typing import Any

from . import compile as compile_fix

MODE = "reduce-overhead"
#: the script's own compile modes and the mode with CUDA graphs each becomes
WITH_GRAPHS = {None: MODE, "default": MODE, "max-autotune-no-cudagraphs": "max-autotune"}


def notebook(ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> contextlib.AbstractContextManager[Callable[[], object]]:
    """The step with its modules compiled into CUDA graphs."""
    return compile_fix.compiled(ns, step, MODE)


class IterationEnds:
    """Which optimizer step ends an iteration: the last optimizer to step before the first
    one steps again (a single optimizer's every step; a GAN's generator update). Where the
    run counted its optimizers per iteration, the first iteration's end is known too: the
    graphs' memory must be marked there, before the second iteration's first model call
    (DCGAN and nanoGPT with accumulation crashed on the H200 when the mark came one
    iteration late)."""

    def __init__(self, per_iteration: int | None = None) -> None:
        """`per_iteration`: the optimizers one iteration steps, as the run counted them."""
        self.per_iteration = per_iteration
        self.order: list[int] = []  # the optimizers of the first iteration, in step order
        self.last: int | None = None  # the one that ends an iteration, once known

    def ends_iteration(self, optimizer_id: int) -> bool:
        """Whether this optimizer's step, just taken, ended an iteration."""
        if self.last is None:
            if optimizer_id not in self.order:
                self.order.append(optimizer_id)
                if len(self.order) != self.per_iteration:
                    return False
            self.last = self.order[-1]  # every optimizer of an iteration has stepped
        return optimizer_id == self.last


def optimizers_per_iteration(loop: Mapping[str, Any]) -> int | None:
    """The run's optimizers per iteration, a whole number (None where it did not count one)."""
    n = loop.get("optimizers_per_step")
    return round(n) if isinstance(n, (int, float)) and n >= 1 else None


class Startup(compile_fix.Startup):
    """The script's trained modules compiled with mode='reduce-overhead' (or its own compile
    call given that mode), iterations marked for the graphs' memory."""

    name = "graphs"
    mode = MODE

    def apply(self) -> None:
        from torch.optim.optimizer import register_optimizer_step_post_hook

        super().apply()
        self._iterations = IterationEnds(optimizers_per_iteration(self.loop))
        register_optimizer_step_post_hook(self._mark_iteration)
        self._give_script_compile_the_mode()

    def _mark_iteration(self, optimizer: Any, *_: Any) -> None:
        """After the last optimizer of an iteration steps, the next iteration begins: the
        graphs may reuse the memory of everything before it (not earlier: a GAN's fake
        batch is read again after the discriminator's update)."""
        if self._iterations.ends_iteration(id(optimizer)):
            self.torch.compiler.cudagraph_mark_step_begin()

    def _give_script_compile_the_mode(self) -> None:
        """The script's own `torch.compile(...)` calls compile with CUDA graphs."""
        original, fix = self.torch.compile, self

        @functools.wraps(original)
        def compile_with_graphs(*args: Any, **kwargs: Any) -> Any:
            mode = kwargs.get("mode")
            if "options" not in kwargs and mode in WITH_GRAPHS:
                kwargs["mode"] = WITH_GRAPHS[mode]
                fix.applied.append(f"mode={kwargs['mode']!r} on the script's own "
                                   f"torch.compile call (was {mode!r})")
            return original(*args, **kwargs)

        self.torch.compile = compile_with_graphs
