"""tf32: TF32 Tensor-Core math for fp32 matmuls and convolutions."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..namespace import torch_module
from .base import StartupFix


@contextlib.contextmanager
def notebook(ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> Iterator[Callable[[], object]]:
    """The step as it is, with TF32 allowed (the caller's KernelState puts the flags back)."""
    torch = torch_module()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    yield step


class Startup(StartupFix):
    """TF32 for the whole script; a script that switches it off at its start (as one written
    for full fp32 does) has it switched back on after its first optimizer step, a warm-up
    step: the try measures what TF32 would give that script."""

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
