"""Phase ranges (forward/backward/optimizer/data, NVTX steps) emitted into Kineto and NVTX."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from .optimizer_hooks import AFTER_STEP, BEFORE_STEP

NVTX_DOMAIN = "jupyter_gpuprof"
FORWARD, BACKWARD, OPTIMIZER, DATA, STEP = "forward", "backward", "optimizer", "data", "step"

_Handle = tuple[Any, Any]


def _nvtx_backend() -> tuple[Callable[[str], Any], Callable[[Any], None]] | None:
    """NVTX start/end functions (the nvtx package, else torch.cuda.nvtx); None without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return None
    try:
        import nvtx  # type: ignore[import-untyped,import-not-found,unused-ignore]

        return functools.partial(nvtx.start_range, domain=NVTX_DOMAIN), nvtx.end_range
    except ImportError:
        return torch.cuda.nvtx.range_start, torch.cuda.nvtx.range_end


class PhaseRanges:
    """Installs global hooks that wrap each training phase in a record_function and an NVTX range.

    activate() adds the optimizer step callbacks (to the capture's shared optimizer hooks, where
    one can be added from inside a hook: a hook-driven capture starts at a step's end), the
    per-module hooks and the backward/DataLoader wrappers just for the profiled steps, so warm-up
    and baseline run the user's code untouched: on a millisecond step each call counts
    (capture/optimizer_hooks.py). deactivate() undoes everything, from inside an optimizer
    hook too.
    """

    def __init__(self, trace: bool = True, nvtx: bool = True) -> None:
        self._trace = trace
        self._nvtx = _nvtx_backend() if nvtx else None
        self.active = False
        self._active_handles: list[Any] = []  # module hooks: live while active
        self._optimizer_off: list[Callable[[], None]] = []  # optimizer callbacks: while active
        self._open: dict[str, _Handle] = {}
        self._depth = 0
        self._tid = threading.get_ident()
        self._orig_backward: Callable[..., Any] | None = None
        self._orig_next: Callable[..., Any] | None = None
        self._wrapped_backward: Callable[..., Any] | None = None
        self._wrapped_next: Callable[..., Any] | None = None
        self._step: Any = None
        #: called with `torch.autograd.backward`'s tensors before each backward (the memory
        #: recorder walks the step's graph there)
        self.on_backward: Callable[[Any], None] | None = None

    # ranges -----------------------------------------------------------------
    def _begin(self, name: str) -> None:
        rf = nv = None
        if self._trace:
            from torch.autograd.profiler import record_function

            rf = record_function(name)
            rf.__enter__()
        if self._nvtx is not None:
            nv = self._nvtx[0](name)
        self._open[name] = (rf, nv)

    def _end(self, name: str) -> None:
        handle = self._open.pop(name, None)
        if handle is None:
            return
        rf, nv = handle
        if rf is not None:
            rf.__exit__(None, None, None)
        if nv is not None and self._nvtx is not None:
            self._nvtx[1](nv)

    def _end_all(self) -> None:
        for name in reversed(list(self._open)):
            self._end(name)
        self._depth = 0

    def begin_step(self) -> None:
        """Open the NVTX range of a step (Kineto has ProfilerStep#N already: no duplicate there)."""
        if self._nvtx is not None:
            self._step = self._nvtx[0](STEP)

    def end_step(self) -> None:
        """Close whatever a step left open (a forward that raised, say) and its NVTX step range."""
        self._end_all()
        if self._step is not None and self._nvtx is not None:
            self._nvtx[1](self._step)
        self._step = None

    # hooks ------------------------------------------------------------------
    def _on_thread(self) -> bool:
        return threading.get_ident() == self._tid

    def _forward_pre(self, module: Any, args: Any) -> None:
        if not self._on_thread():
            return
        if self._depth == 0 and BACKWARD not in self._open and FORWARD not in self._open:
            self._begin(FORWARD)
        self._depth += 1

    def _forward_post(self, module: Any, args: Any, output: Any) -> None:
        if not self._on_thread() or self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0:
            self._end(FORWARD)

    def _optimizer_pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self.active and self._on_thread() and OPTIMIZER not in self._open:
            self._begin(OPTIMIZER)

    def _optimizer_post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if self.active and self._on_thread():
            self._end(OPTIMIZER)

    def _wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        ranges = self

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not ranges.active or name in ranges._open or not ranges._on_thread():
                return fn(*args, **kwargs)
            if name == BACKWARD and ranges.on_backward is not None and args:
                ranges.on_backward(args[0])
            ranges._begin(name)
            try:
                return fn(*args, **kwargs)
            finally:
                ranges._end(name)

        return wrapper

    # lifecycle --------------------------------------------------------------
    def activate(self) -> None:
        """Start emitting ranges: module hooks, backward and DataLoader wrappers go in."""
        if self.active:
            return
        import torch
        import torch.utils.data.dataloader as dl
        from torch.nn.modules.module import (
            register_module_forward_hook,
            register_module_forward_pre_hook,
        )

        # Dynamo would compile the hooks' own frames when a compiled module calls them (and warn
        # on get_ident): they run as plain Python, outside any graph.
        self._active_handles = [
            register_module_forward_pre_hook(torch.compiler.disable(self._forward_pre)),
            register_module_forward_hook(torch.compiler.disable(self._forward_post),
                                         always_call=True),
        ]
        # first: "optimizer" closes before the step boundary that comes after it
        self._optimizer_off = [BEFORE_STEP.add(self._optimizer_pre, first=True),
                               AFTER_STEP.add(self._optimizer_post, first=True)]
        self._orig_backward = torch.autograd.backward
        self._wrapped_backward = self._wrap(BACKWARD, self._orig_backward)
        torch.autograd.backward = self._wrapped_backward
        self._orig_next = dl._BaseDataLoaderIter.__next__
        self._wrapped_next = self._wrap(DATA, self._orig_next)
        dl._BaseDataLoaderIter.__next__ = self._wrapped_next  # type: ignore[method-assign]
        self.active = True

    def deactivate(self) -> None:
        """Stop emitting ranges and take the module hooks and wrappers out again."""
        if not self.active:
            return
        import torch
        import torch.utils.data.dataloader as dl

        self.active = False
        self.end_step()
        for h in self._active_handles:
            h.remove()
        self._active_handles = []
        for remove in self._optimizer_off:
            remove()
        self._optimizer_off = []
        # Restore only if nobody wrapped on top of us since (else we would drop their wrapper).
        if torch.autograd.backward is self._wrapped_backward:
            torch.autograd.backward = self._orig_backward  # type: ignore[assignment]
        if dl._BaseDataLoaderIter.__next__ is self._wrapped_next:
            dl._BaseDataLoaderIter.__next__ = self._orig_next  # type: ignore[method-assign,assignment]
