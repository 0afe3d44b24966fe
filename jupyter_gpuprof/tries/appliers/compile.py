"""compile: torch.compile of the outermost modules the step calls (graphs.py adds CUDA graphs)."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any

from ...capture.training import BACKWARD_STEPS_AFTER, compiled_graphs
from ..namespace import modules, torch_module
from .base import StartupFix, eager_only

#: torch.compile's mode for this fix (graphs.py: "reduce-overhead")
MODE: str | None = None


def called_modules(ns: dict[str, object], step: Callable[[], object]) -> list[str]:
    """Names of the namespace's modules the step calls (found with forward hooks, one step)."""
    called: list[str] = []
    found = modules(ns)
    handles = [m.register_forward_pre_hook(lambda *_a, k=k: called.append(k))
               for k, m in found.items()]
    try:
        step()
    finally:
        for h in handles:
            h.remove()
    # keep the outermost ones: a submodule of a called module is compiled with it
    names = list(dict.fromkeys(called))
    subs = {id(c) for k in names for c in found[k].modules() if c is not found[k]}
    return [k for k in names if id(found[k]) not in subs]


@contextlib.contextmanager
def compiled(ns: dict[str, object], step: Callable[[], object],
             mode: str | None) -> Iterator[Callable[[], object]]:
    """The step with every module it calls rebound in `ns` to its compiled form."""
    names = called_modules(ns, step)
    if not names:
        raise LookupError("the step calls no nn.Module bound to a name in the namespace")
    torch = torch_module()
    for k in names:
        ns[k] = torch.compile(ns[k], mode=mode)
    yield step


def notebook(ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> contextlib.AbstractContextManager[Callable[[], object]]:
    """The step with its modules compiled (the caller's KernelState rebinds the originals)."""
    return compiled(ns, step, MODE)


#: the attribute where a framework's wrapper keeps the module it runs (Lightning Fabric's
#: `_FabricModule`, whose __setattr__ writes through to the wrapped model: compiling the
#: wrapper's forward there made the model call itself until the recursion limit)
WRAPPED_MODULE_ATTR = "_forward_module"


def unwrapped(module: Any) -> Any:
    """The module to compile: the model a framework's wrapper runs, else `module` itself."""
    inner = module.__dict__.get("_modules", {}).get(WRAPPED_MODULE_ATTR)
    return inner if inner is not None else module


def compiled_by_script(module: Any) -> bool:
    """Whether the script compiled this module itself: `torch.compile(model)`'s wrapper, or
    `model.compile()` in place."""
    return (type(module).__name__ == "OptimizedModule" and hasattr(module, "_orig_mod")
            or getattr(module, "_compiled_call_impl", None) is not None)


class Startup(StartupFix):
    """torch.compile of the outermost modules the first step calls whose weights it trains."""

    name = "compile"
    mode: str | None = MODE

    def apply(self) -> None:
        from torch.nn.modules.module import register_module_forward_pre_hook
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self.called: dict[int, Any] = {}
        self.compiled_already: list[str] = []  # modules the script compiled itself
        self.targets: list[Any] = []  # the modules compiled
        self._compiled: set[int] = set()  # ids of the called modules compiled (or skipped)
        self._optimizers: set[int] = set()  # optimizers that stepped once
        self._torch_compile = self.torch.compile  # the fix's own, never a wrapper of it
        self.stepped = False
        self._backwards = 0
        self._graphs_before = compiled_graphs()
        self._forward_hook: Any = register_module_forward_pre_hook(
            eager_only(self.torch, self._note_call))
        # stays registered (torch iterates its hooks while calling this one), idle after once
        register_optimizer_step_post_hook(self._compile_at_first_step)
        original, fix = self.torch.autograd.backward, self

        @functools.wraps(original)
        def backward(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            fix._after_backward()
            return out

        self.torch.autograd.backward = backward

    def _note_call(self, module: Any, _args: Any) -> None:
        """Remember a module the first step calls (returns None: the inputs stay as they are)."""
        self.called.setdefault(id(module), module)

    def _compile_at_first_step(self, optimizer: Any, *_: Any) -> None:
        """At each optimizer's first step: compile in place what the forward called whose
        weights it trains (a GAN: the discriminator at the first step, the generator at the
        second; compiled at the first only, DCGAN's generator stayed eager). Once an optimizer
        steps again, every optimizer of an iteration has: the calls are no longer noted."""
        if id(optimizer) in self._optimizers:
            self._stop_noting()
            return
        self._optimizers.add(id(optimizer))
        owned = {id(p) for g in optimizer.param_groups for p in g["params"]}
        self._compile(lambda m: any(id(p) in owned for p in m.parameters()))

    def _stop_noting(self) -> None:
        """Take the call-noting hook out (it runs on every module call) and forget the calls."""
        if self._forward_hook is not None:
            self._forward_hook.remove()
            self._forward_hook = None
        self.called.clear()

    def _after_backward(self) -> None:
        """A loop with no optimizer (parameters updated by hand) steps at each backward()
        once BACKWARD_STEPS_AFTER came without an optimizer step, as the capture counts it:
        then compile what the forward called whose parameters got gradients."""
        self._backwards += 1
        if not self.stepped and self._backwards >= BACKWARD_STEPS_AFTER:
            self._compile(lambda m: any(p.grad is not None for p in m.parameters()))
            self._stop_noting()

    def _compile(self, trains: Callable[[Any], bool]) -> None:
        """Compile in place the outermost called modules that `trains` says are trained."""
        self.stepped = True
        trained = [m for m in self.called.values() if trains(m)]
        inner = {id(c) for m in trained for c in m.modules() if c is not m}
        for m in (m for m in trained if id(m) not in inner and id(m) not in self._compiled):
            self._compiled.add(id(m))
            if compiled_by_script(m):  # compiling it again would measure nothing
                self.compiled_already.append(type(m).__name__)
                continue
            target = unwrapped(m)
            # forward, not module.compile(): that compiles _call_impl, and dynamo skips it
            # for a pure torch.nn container (an nn.Sequential stayed eager in torch 2.13);
            # set on the instance itself: a wrapper's __setattr__ may pass it on elsewhere
            object.__setattr__(target, "forward",
                               self._torch_compile(target.forward, mode=self.mode))
            self.targets.append(target)
            self.applied.append(f"torch.compile({type(target).__name__}"
                                + (f", mode={self.mode!r})" if self.mode else ")")
                                + (f" inside {type(m).__name__}" if target is not m else ""))

    def problem(self) -> str | None:
        if not self.applied and self.compiled_already:
            return (f"the script compiles {', '.join(self.compiled_already)} itself: a second "
                    "compile measures nothing (--try graphs gives its own torch.compile call "
                    "mode='reduce-overhead')")
        if not self.applied:
            return ("no module to compile: the first step called no nn.Module whose "
                    "parameters it trains")
        if compiled_graphs() <= self._graphs_before:
            rnns = sorted({type(m).__name__ for t in self.targets for m in t.modules()
                           if isinstance(m, self.torch.nn.RNNBase)})
            return ("torch.compile compiled no graph of the step's modules"
                    + (f": its forward runs an RNN, GRU or LSTM ({', '.join(rnns)}), which "
                       "Dynamo skips" if rnns else ""))
        return None
