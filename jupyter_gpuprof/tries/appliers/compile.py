"""compile: torch.compile of the outermost modules the step calls (graphs.py adds CUDA graphs)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ...capture.training import compiled_graphs
from ..namespace import modules, torch_module
from .base import StartupFix

#: torch.compile's mode for this fix (graphs.py: "reduce-overhead")
MODE: str | None = None


def called_modules(ns: dict[str, Any], step: Callable[[], object]) -> list[str]:
    """Names of the namespace's modules the step calls (found with forward hooks, one step)."""
    called: list[str] = []
    handles = [m.register_forward_pre_hook(lambda *_a, k=k: called.append(k))
               for k, m in modules(ns).items()]
    try:
        step()
    finally:
        for h in handles:
            h.remove()
    # keep the outermost ones: a submodule of a called module is compiled with it
    names = list(dict.fromkeys(called))
    subs = {id(c) for k in names for c in ns[k].modules() if c is not ns[k]}
    return [k for k in names if id(ns[k]) not in subs]


@contextlib.contextmanager
def compiled(ns: dict[str, Any], step: Callable[[], object],
             mode: str | None) -> Iterator[Callable[[], object]]:
    """The step with every module it calls rebound in `ns` to its compiled form."""
    names = called_modules(ns, step)
    if not names:
        raise LookupError("the step calls no nn.Module bound to a name in the namespace")
    torch = torch_module()
    for k in names:
        ns[k] = torch.compile(ns[k], mode=mode)
    yield step


def notebook(ns: dict[str, Any], step: Callable[[], object],
             cuda: bool) -> contextlib.AbstractContextManager[Callable[[], object]]:
    """The step with its modules compiled (the caller's KernelState rebinds the originals)."""
    return compiled(ns, step, MODE)


class Startup(StartupFix):
    """torch.compile of the outermost modules the first step calls whose weights it trains."""

    name = "compile"
    mode: str | None = MODE

    def apply(self) -> None:
        from torch.nn.modules.module import register_module_forward_pre_hook
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self.called: dict[int, Any] = {}
        self.stepped = False
        self._graphs_before = compiled_graphs()
        self._forward_hook = register_module_forward_pre_hook(self._note_call)
        # stays registered (torch iterates its hooks while calling this one), idle after once
        register_optimizer_step_post_hook(self._compile_at_first_step)

    def _note_call(self, module: Any, _args: Any) -> None:
        """Remember a module the first step calls (returns None: the inputs stay as they are)."""
        self.called.setdefault(id(module), module)

    def _compile_at_first_step(self, optimizer: Any, *_: Any) -> None:
        """At the first optimizer step: compile in place what its forward called."""
        if self.stepped:
            return
        self.stepped = True
        self._forward_hook.remove()  # it ran on every module call: stop paying for it
        owned = {id(p) for g in optimizer.param_groups for p in g["params"]}
        trained = [m for m in self.called.values()
                   if any(id(p) in owned for p in m.parameters())]
        inner = {id(c) for m in trained for c in m.modules() if c is not m}
        for m in (m for m in trained if id(m) not in inner):
            # forward, not module.compile(): that compiles _call_impl, and dynamo skips it
            # for a pure torch.nn container (an nn.Sequential stayed eager in torch 2.13)
            m.forward = self.torch.compile(m.forward, mode=self.mode)
            self.applied.append(f"torch.compile({type(m).__name__}"
                                + (f", mode={self.mode!r})" if self.mode else ")"))
        self.called.clear()

    def problem(self) -> str | None:
        if not self.applied:
            return ("no module to compile: the first step called no nn.Module whose "
                    "parameters the optimizer updates")
        if compiled_graphs() <= self._graphs_before:
            return "torch.compile compiled no graph of the step's modules"
        return None
