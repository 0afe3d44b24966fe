"""amp: bf16 autocast around the step (fp16 only with the script's own GradScaler)."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

from ..namespace import torch_module
from .base import StartupFix, eager_only

#: what the fix says when it turned a region of the user's own into bf16
FP32_REGION_NOTE = "the code's own torch.autocast(dtype=torch.float32) runs in bfloat16"


def fp32_regions_in_bf16(torch: Any, noted: Callable[[], None]) -> Callable[[], None]:
    """From now on, a `torch.autocast(dtype=torch.float32)` region the user's code opens runs in
    bf16 (inside it the fix's own autocast is overridden, and fp32 autocast is the code's
    precision setting, which is what this fix changes: nanoGPT's --dtype=float32); `noted` is
    called when one was. Returns what puts torch's autocast back as it was."""
    cls = torch.amp.autocast_mode.autocast
    original = cls.__init__
    signature = inspect.signature(original)

    @functools.wraps(original)
    def init_in_bf16(region: Any, *args: Any, **kwargs: Any) -> None:
        bound = signature.bind(region, *args, **kwargs)
        given = bound.arguments
        if given.get("dtype") is torch.float32 and given.get("enabled", True):
            given["dtype"] = torch.bfloat16
            noted()
        original(*bound.args, **bound.kwargs)

    cls.__init__ = init_in_bf16

    def put_back() -> None:
        cls.__init__ = original

    return put_back


@contextlib.contextmanager
def notebook(ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> Iterator[Callable[[], object]]:
    """The step run under bf16 autocast (fp16 on a GPU without bf16), the cell's own fp32
    autocast regions in bf16 too."""
    torch = torch_module()
    device = "cuda" if cuda else "cpu"
    dtype = torch.bfloat16 if (not cuda or torch.cuda.is_bf16_supported()) else torch.float16

    def amp_step() -> object:
        with torch.autocast(device, dtype=dtype):
            return step()

    put_back = fp32_regions_in_bf16(torch, lambda: None)
    try:
        yield amp_step
    finally:
        put_back()


class Startup(StartupFix):
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
        # the first step's module calls say whether the forward really ran under bf16 autocast.
        self.calls_on: list[bool] = []
        self._forward_hook: Any = register_module_forward_pre_hook(eager_only(
            torch, lambda *_: self.calls_on.append(self._in_bf16())))
        self.applied.append(f"bf16 autocast on {self.device} for the whole script")
        self._script_autocast_in_bf16()

    def _in_bf16(self) -> bool:
        """Whether code running now runs under bf16 autocast on the fix's device."""
        torch = self.torch
        return bool(torch.is_autocast_enabled(self.device)
                    and torch.get_autocast_dtype(self.device) == torch.bfloat16)

    def _script_autocast_in_bf16(self) -> None:
        """The script's own fp32 autocast regions run in bf16, said once in `applied`."""
        def noted() -> None:
            if FP32_REGION_NOTE not in self.applied:
                self.applied.append(FP32_REGION_NOTE)

        fp32_regions_in_bf16(self.torch, noted)  # for the whole process: never put back

    def _after_step(self, *_: Any) -> None:
        """After each optimizer step: drop the stale weight copies; stop watching the forward."""
        self.torch.clear_autocast_cache()
        if self._forward_hook is not None:
            self._forward_hook.remove()  # it ran on every module call of the first step only
            self._forward_hook = None

    def problem(self) -> str | None:
        if self.calls_on and not any(self.calls_on):
            return (f"the step's forward ran without bf16 autocast on {self.device}: the "
                    "script's own torch.autocast(enabled=False) or fp16 region overrides the "
                    f"try, or its model is not on {self.device}")
        if not self.torch.is_autocast_enabled(self.device):
            return "the script switched autocast off again"
        return None
