"""One global optimizer pre-hook and one post-hook, shared by every part of the capture.

torch calls each global optimizer hook at every `optimizer.step()`, and where a step takes a
millisecond of the host each call of ours is a measurable share of it: on the H200 the DDP
tutorial's shape of step paid 4.4 % for the capture's hooks, four of them torch hook calls a
step, each behind its own cost wrapper (docs/benchmarks.md §21). The phase ranges, the training
counters and the step boundary add their callbacks here instead: one torch hook each way, in
the order they were added, charged once a call to the capture's cost account.

A callback may be added or removed from inside a hook: the callbacks are a tuple swapped whole.
torch iterates its hook dict while a hook runs, and a dict changed under its iterator raises in
the user's `optimizer.step()`, so an emptied chain takes its torch hook out at once only where
that is safe: outside its own call, or inside it when its hook is the dict's last (the iterator
has then moved past the end and stops without looking at the dict again). Otherwise the hook
stays, returning at once, and goes at the end of a later call of its own where it is last, or
at the next removal outside a hook.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from .capture_cost import COST

Hook = Callable[[Any, Any, Any], None]  # (optimizer, args, kwargs), as torch calls it


class HookChain:
    """The callbacks of one kind of global optimizer hook, behind one torch hook."""

    def __init__(self, register: str) -> None:
        """`register`: the torch.optim.optimizer function that registers this kind."""
        self._register = register
        self.callbacks: tuple[Hook, ...] = ()
        self._handle: Any = None
        self._running = 0

    def add(self, fn: Hook, first: bool = False) -> Callable[[], None]:
        """Call `fn` at every optimizer step, after the callbacks added before it (`first`:
        before them); returns what removes it. Added inside a hook, it runs from the next step."""
        self.callbacks = (fn, *self.callbacks) if first else (*self.callbacks, fn)
        if self._handle is None:
            from torch.optim import optimizer

            self._handle = getattr(optimizer, self._register)(self._call)
        return self._remover(fn)

    def swap(self, old: Hook, new: Hook) -> Callable[[], None]:
        """Put `new` where `old` is (same place in the order; at the end if `old` is not in);
        returns what removes `new`. Inside a hook too: the swap takes effect from the next
        step, and torch's hook dict is not touched while the chain holds a callback."""
        if any(f is old for f in self.callbacks):
            self.callbacks = tuple(new if f is old else f for f in self.callbacks)
            return self._remover(new)
        return self.add(new)

    def _remover(self, fn: Hook) -> Callable[[], None]:
        def remove() -> None:
            self.callbacks = tuple(f for f in self.callbacks if f is not fn)
            self._drop()

        return remove

    def _drop(self) -> None:
        """Take torch's hook out if the chain is empty and that is safe now (module docstring)."""
        if self.callbacks or self._handle is None:
            return
        if self._running:
            hooks = self._handle.hooks_dict_ref()
            if hooks is None or next(reversed(hooks), None) != self._handle.id:
                return  # a hook after ours: torch's iterator would see the dict change
        self._handle.remove()
        self._handle = None

    @property
    def registered(self) -> bool:
        """Whether torch still calls this chain's hook."""
        return self._handle is not None

    def _call(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        callbacks = self.callbacks
        self._running += 1  # torch is iterating this hook's dict until the call returns
        try:
            if not callbacks:
                return
            t0 = time.perf_counter_ns()
            try:
                for fn in callbacks:
                    fn(optimizer, args, kwargs)
            finally:
                # a step boundary that started a phase charges that phase only what came after
                COST.add(time.perf_counter_ns() - max(t0, COST._event_ns))
        finally:
            if not self.callbacks:
                self._drop()  # emptied in this call, or before it: out where it is last
            self._running -= 1


#: before each optimizer step (the phase ranges open "optimizer"; the counters see a closure)
BEFORE_STEP = HookChain("register_optimizer_step_pre_hook")
#: after each optimizer step (the phase ranges close "optimizer", then the step boundary)
AFTER_STEP = HookChain("register_optimizer_step_post_hook")
