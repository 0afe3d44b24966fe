"""checkpoint: activation checkpointing of the model's repeated layers, recomputed in backward.

The unit is the one the memory over the step names (docs/memory.md): the layers a forward
calls from one line in a loop, found here as the children of a ModuleList or Sequential that
share one class (the group holding the most parameters). A Hugging Face model that supports
it gets its own `gradient_checkpointing_enable()`; any other model gets each layer's forward
wrapped in `torch.utils.checkpoint.checkpoint(..., use_reentrant=False)`, which recomputes
the layer in backward with the RNG state it had: the losses and gradients stay the same.
A model the script compiled itself is left alone, with the reason: its graphs were traced
without the wrapper.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..namespace import modules, torch_module
from . import compile as compile_fix

#: the reason given for a model the script compiled itself
COMPILED = ("the script compiles {names} itself: checkpointing must be switched on before "
            "torch.compile (model.gradient_checkpointing_enable(), or checkpoint() in the "
            "layers' parent forward), so the try leaves it alone")


def repeated_layers(model: Any) -> tuple[str, list[Any]]:
    """The model's repeated layers and where they sit ('h' in GPT2Model): the children of one
    ModuleList or Sequential sharing a class, at least two with parameters; of several such
    groups, the one holding the most parameters. ('', []) when there is none."""
    torch = torch_module()
    containers = (torch.nn.ModuleList, torch.nn.Sequential)
    best: tuple[int, str, list[Any]] = (0, "", [])
    for name, parent in model.named_modules():
        if not isinstance(parent, containers):
            continue
        by_class: dict[type, list[Any]] = {}
        for child in parent.children():
            by_class.setdefault(type(child), []).append(child)
        for group in by_class.values():
            size = sum(p.numel() for c in group for p in c.parameters())
            if len(group) >= 2 and all(any(True for _ in c.parameters()) for c in group) \
                    and size > best[0]:
                best = (size, name, group)
    return best[1], best[2]


def hugging_face(model: Any) -> bool:
    """Whether the model checkpoints its own layers (a Hugging Face PreTrainedModel)."""
    return bool(getattr(model, "supports_gradient_checkpointing", False)
                and callable(getattr(model, "gradient_checkpointing_enable", None)))


class Wrapped:
    """Layers whose forward runs under `torch.utils.checkpoint`; `calls` counts the forwards
    that ran checkpointed (with gradients on); `undo()` gives each layer its forward back."""

    def __init__(self, torch: Any, layers: list[Any]) -> None:
        self.calls = 0
        self._layers = layers
        self._before = [layer.__dict__.get("forward") for layer in layers]
        for layer in layers:
            object.__setattr__(layer, "forward", self._checkpointed(torch, layer.forward))

    def _checkpointed(self, torch: Any, forward: Callable[..., Any]) -> Callable[..., Any]:
        from torch.utils.checkpoint import checkpoint

        def forward_checkpointed(*args: Any, **kwargs: Any) -> Any:
            if not torch.is_grad_enabled():
                return forward(*args, **kwargs)  # nothing is saved: nothing to recompute
            self.calls += 1
            return checkpoint(forward, *args, use_reentrant=False, **kwargs)

        return forward_checkpointed

    def undo(self) -> None:
        for layer, before in zip(self._layers, self._before, strict=True):
            if before is None:
                layer.__dict__.pop("forward", None)
            else:
                object.__setattr__(layer, "forward", before)


def checkpoint_model(torch: Any, model: Any) -> tuple[str, Callable[[], None], Wrapped | None]:
    """Switch checkpointing on for one model: what was done, what undoes it, and the wrapped
    layers (None for a Hugging Face model, which checkpoints its own). LookupError when the
    model has no repeated layers."""
    if hugging_face(model):
        was_on = bool(getattr(model, "is_gradient_checkpointing", False))
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})

        def disable() -> None:
            if not was_on:
                model.gradient_checkpointing_disable()

        return (f"{type(model).__name__}.gradient_checkpointing_enable() (Hugging Face, "
                "use_reentrant=False)", disable, None)
    where, layers = repeated_layers(model)
    if not layers:
        raise LookupError(f"{type(model).__name__} has no repeated layers to checkpoint (no "
                          "ModuleList or Sequential of two or more blocks of one class)")
    wrapped = Wrapped(torch, layers)
    return (f"torch.utils.checkpoint of the {len(layers)} {type(layers[0]).__name__} layers in "
            f"{type(model).__name__}{'.' + where if where else ''} (use_reentrant=False)",
            wrapped.undo, wrapped)


@contextlib.contextmanager
def notebook(ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> Iterator[Callable[[], object]]:
    """The step with the repeated layers of the modules it calls checkpointed; put back after."""
    torch = torch_module()
    found = modules(ns)
    called = [compile_fix.unwrapped(found[k]) for k in compile_fix.called_modules(ns, step)]
    if compiled := [type(m).__name__ for m in called if compile_fix.compiled_by_script(m)]:
        raise LookupError(COMPILED.format(names=", ".join(compiled)))
    undo: list[Callable[[], None]] = []
    try:
        for m in called:
            with contextlib.suppress(LookupError):
                undo.append(checkpoint_model(torch, m)[1])
        if not undo:
            raise LookupError("no module the step calls has repeated layers to checkpoint")
        yield step
    finally:
        for u in undo:
            u()


class Startup(compile_fix.Startup):
    """At the first optimizer step, the repeated layers of the modules the first forward called
    whose weights it trains are checkpointed (for the rest of the script)."""

    name = "checkpoint"

    def apply(self) -> None:
        super().apply()
        self.wrapped: list[Wrapped] = []
        self.hf_models: list[Any] = []
        self.without_layers: list[str] = []

    def _compile(self, trains: Callable[[Any], bool]) -> None:
        """Checkpoint (not compile: this fix reuses compile's choice of modules) the outermost
        called modules that `trains` says are trained."""
        self.stepped = True
        trained = [m for m in self.called.values() if trains(m)]
        inner = {id(c) for m in trained for c in m.modules() if c is not m}
        for m in (m for m in trained if id(m) not in inner and id(m) not in self._compiled):
            self._compiled.add(id(m))
            if compile_fix.compiled_by_script(m):
                self.compiled_already.append(type(m).__name__)
                continue
            target = compile_fix.unwrapped(m)
            try:
                done, _undo, wrapped = checkpoint_model(self.torch, target)
            except LookupError:
                self.without_layers.append(type(target).__name__)
                continue
            self.applied.append(done)
            if wrapped is None:
                self.hf_models.append(target)
            else:
                self.wrapped.append(wrapped)

    def problem(self) -> str | None:
        if not self.applied and self.compiled_already:
            return COMPILED.format(names=", ".join(self.compiled_already))
        if not self.applied:
            models = ", ".join(self.without_layers) or "no nn.Module whose parameters it trains"
            return (f"nothing to checkpoint: the first step called {models}, with no repeated "
                    "layers (a ModuleList or Sequential of two or more blocks of one class)")
        if self.wrapped and not any(w.calls for w in self.wrapped) and not self.hf_models:
            return "the checkpointed layers never ran with gradients on in the measured steps"
        off = [type(m).__name__ for m in self.hf_models
               if not getattr(m, "is_gradient_checkpointing", True)]
        if off:
            return f"the script switched gradient checkpointing off again ({', '.join(off)})"
        return None
