"""The `--try` fixes as a script gets them: applied once at start-up, right after torch imports.

`jupyter gpuprof run --try` cannot re-run one step of a script with a fix (the notebook's
`--try` does that in the live kernel: capture/try_fixes.py); it runs the whole command again
with one fix switched on for the process. Each fix here says what it changed (`applied`) and,
once the steps were measured, whether it really was in force (`problem()`): a try that changed
nothing is reported as such, never as a measured gain of zero.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from .training import compiled_graphs

#: DataLoader settings the `loader` fix gives a loader the script left at torch's defaults
LOADER_PREFETCH = 4
MAX_LOADER_WORKERS = 8


class StartupFix:
    """One fix switched on for the whole process; subclasses per fix."""

    name = ""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.applied: list[str] = []  # what it changed, for the result and the report

    def apply(self) -> None:
        """Switch the fix on (raises with a one-line reason when it cannot be applied here)."""

    def problem(self) -> str | None:
        """Why the measured steps did not run with the fix, or None when they did."""
        return None


class Tf32(StartupFix):
    """TF32 Tensor-Core math for fp32 matmuls and convolutions; a script that switches it off
    at its start (as one written for full fp32 does) has it switched back on after its first
    optimizer step, a warm-up step: the try measures what TF32 would give that script."""

    name = "tf32"

    def apply(self) -> None:
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self.turned_off = 0  # steps after which the script had switched it off
        self._on()
        self.applied.append("TF32 allowed for matmuls and cuDNN")
        register_optimizer_step_post_hook(self._after_step)

    def _on(self) -> None:
        self.torch.backends.cuda.matmul.allow_tf32 = True
        self.torch.backends.cudnn.allow_tf32 = True

    def _is_on(self) -> bool:
        b = self.torch.backends
        return bool(b.cuda.matmul.allow_tf32 and b.cudnn.allow_tf32)

    def _after_step(self, *_: Any) -> None:
        if self._is_on():
            return
        self.turned_off += 1
        self._on()
        if self.turned_off == 1:
            self.applied.append("the script switched TF32 off; switched back on after its "
                                "first step (a warm-up step)")

    def problem(self) -> str | None:
        if self.turned_off > 1 or not self._is_on():
            return ("the script switches TF32 off inside its steps (allow_tf32 = False): the "
                    "try cannot keep it on; allow it in the script and measure with compare")
        return None


class Amp(StartupFix):
    """bf16 autocast on the main thread for the whole script, its weight cache cleared per step."""

    name = "amp"

    def apply(self) -> None:
        torch = self.torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        if self.device == "cuda" and not torch.cuda.is_bf16_supported():
            raise RuntimeError(
                "this GPU has no bf16, and fp16 autocast needs a GradScaler in the training "
                "loop, which cannot be added from outside: add torch.autocast + GradScaler "
                "to the script and compare the two runs")
        torch.autocast(self.device, dtype=torch.bfloat16).__enter__()  # left on: never exited
        # Autocast caches the bf16 copy of each weight until its outermost region exits, which
        # this one never does: without clearing, every later forward would use the copies of
        # the first step's weights, not the weights the optimizer updated.
        from torch.nn.modules.module import register_module_forward_pre_hook
        from torch.optim.optimizer import register_optimizer_step_post_hook

        register_optimizer_step_post_hook(self._after_step)
        # A script's own `torch.autocast(enabled=False)` region switches ours off inside it:
        # the first step's module calls say whether the forward really ran under autocast.
        self.calls_on: list[bool] = []
        self._forward_hook: Any = register_module_forward_pre_hook(
            lambda *_: self.calls_on.append(torch.is_autocast_enabled(self.device)))
        self.applied.append(f"bf16 autocast on {self.device} for the whole script")

    def _after_step(self, *_: Any) -> None:
        """After each optimizer step: drop the stale weight copies; stop watching the forward."""
        self.torch.clear_autocast_cache()
        if self._forward_hook is not None:
            self._forward_hook.remove()  # it ran on every module call of the first step only
            self._forward_hook = None

    def problem(self) -> str | None:
        if self.calls_on and not any(self.calls_on):
            return (f"the step's forward ran with autocast off on {self.device}: the script's "
                    "own torch.autocast(enabled=False) region overrides the try, or its model "
                    f"is not on {self.device}")
        if not self.torch.is_autocast_enabled(self.device):
            return "the script switched autocast off again"
        return None


class Compile(StartupFix):
    """torch.compile of the outermost modules the first step calls whose weights it trains."""

    name = "compile"
    mode: str | None = None

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


class Graphs(Compile):
    """`compile` with mode='reduce-overhead': CUDA graphs replay the step's launches."""

    name = "graphs"
    mode = "reduce-overhead"


class Loader(StartupFix):
    """DataLoaders the script builds with torch's defaults get workers, pinning and prefetch."""

    name = "loader"

    def apply(self) -> None:
        dl = self.torch.utils.data.DataLoader
        original = dl.__init__
        signature = inspect.signature(original)
        fix = self

        def __init__(loader: Any, *args: Any, **kwargs: Any) -> None:
            bound = signature.bind(loader, *args, **kwargs)
            bound.arguments.update(fix._faster(bound.arguments))
            original(*bound.args, **bound.kwargs)

        dl.__init__ = __init__

    def _faster(self, given: dict[str, Any]) -> dict[str, Any]:
        """The loader options to change: only those the script left at torch's defaults."""
        iterable = isinstance(given.get("dataset"), self.torch.utils.data.IterableDataset)
        if iterable or given.get("batch_sampler") is not None:
            return {}  # workers would each yield the whole iterable: not the same data
        out: dict[str, Any] = {}
        workers = given.get("num_workers", 0)
        if workers == 0:
            workers = out["num_workers"] = min(MAX_LOADER_WORKERS, os.cpu_count() or 1)
        if not given.get("pin_memory") and self.torch.cuda.is_available():
            out["pin_memory"] = True
        if workers > 0 and not given.get("persistent_workers"):
            out["persistent_workers"] = True
        if workers > 0 and given.get("prefetch_factor") is None:
            out["prefetch_factor"] = LOADER_PREFETCH
        if out:
            self.applied.append("DataLoader " + ", ".join(f"{k}={v}" for k, v in out.items()))
        return out

    def problem(self) -> str | None:
        if not self.applied:
            return ("no DataLoader to change: the script built none with torch's defaults "
                    "(num_workers=0, no pinning, no prefetch)")
        return None


class Unchanged(StartupFix):
    """The control: the script run once more as it is, to see what a fresh process alone
    changes in the step (advice/tries.py holds the fixes' changes to it)."""

    name = "none"

    def apply(self) -> None:
        self.applied.append("nothing: the script re-run as it is (the control)")


FIXES = {f.name: f for f in (Tf32, Amp, Compile, Graphs, Loader, Unchanged)}


def apply_fix(name: str, torch: Any) -> StartupFix:
    """Switch fix `name` on for this process; raises with a one-line reason when it cannot be."""
    if name not in FIXES:
        raise ValueError(f"unknown fix {name!r}; choose from {', '.join(FIXES)}")
    fix = FIXES[name](torch)
    fix.apply()
    return fix
