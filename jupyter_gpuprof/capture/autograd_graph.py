"""The step's autograd graph, walked once from its loss: each node's op, inputs and saved tensors.

`analysis.autocast_dtypes` replays the saved tensors' dtypes under autocast from it. A node's
saved tensors are its `_saved_*` attributes (tensors, or tuples of them); their storages say
which saves share memory. Walked at a recorded step's backward, before it frees them.
"""

from __future__ import annotations

from typing import Any

import torch

from ..store.memory_snapshot import GraphRecord, SavedRecord

#: nodes walked at most (a transformer step's graph is hundreds to thousands)
MAX_NODES = 50_000
#: node names of torch.utils.checkpoint (non-reentrant, reentrant): their saved tensors unpack
#: by recomputing the layer, which must not run outside the step's own backward
CHECKPOINT_NODES = ("_NoopSaveInputs", "CheckpointFunction")


class HookWatch:
    """Counts saved-tensor hooks entered while installed (non-reentrant checkpointing, CPU
    offload): a graph whose saved tensors unpack through them is not walked (it would recompute
    the layers, or copy them back, outside the step's backward)."""

    def __init__(self) -> None:
        self.entered = 0
        self._orig: Any = None
        self._ours: Any = None

    def install(self) -> None:
        if self._orig is not None:
            return
        cls = torch.autograd.graph.saved_tensors_hooks
        orig = cls.__enter__
        watch = self

        def enter(hooks: Any) -> Any:
            watch.entered += 1
            return orig(hooks)

        self._orig, self._ours = orig, enter
        cls.__enter__ = enter  # type: ignore[method-assign]

    def remove(self) -> None:
        cls = torch.autograd.graph.saved_tensors_hooks
        if self._orig is not None and cls.__enter__ is self._ours:
            cls.__enter__ = self._orig  # type: ignore[method-assign]
        self._orig = self._ours = None


def _tensors(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def _weight(t: torch.Tensor) -> bool:
    """A leaf that requires grad, or a view of one (a linear layer saves `weight.t()`)."""
    base = t._base if t._base is not None else t
    return bool(base.is_leaf and base.requires_grad)


def _saved(node: Any, ids: dict[Any, int]) -> list[SavedRecord]:
    out: list[SavedRecord] = []
    for name in dir(node):
        if not name.startswith("_saved_") or name.endswith("_raw"):
            continue
        try:
            value = getattr(node, name)
        except RuntimeError:  # freed already, or not a tensor to unpack
            continue
        for t in _tensors(value):
            if t.device.type == "meta":
                continue
            st = t.untyped_storage()
            out.append({
                "storage": int(st.data_ptr()), "storage_bytes": int(st.nbytes()),
                "view_elems": int(t.numel()), "floating": t.is_floating_point(),
                "element_size": int(t.element_size()),
                "producer": ids.get(t.grad_fn) if t.grad_fn is not None else None,
                "parameter": _weight(t),
                "output": t.grad_fn is node,
            })
    return out


def _inner(fn: Any) -> bool:
    return fn is not None and type(fn).__name__ != "AccumulateGrad"


def graph_nodes(loss: Any) -> list[GraphRecord]:
    """The autograd graph behind `loss` (a tensor), each node with its saved tensors (empty: no
    graph, more than `MAX_NODES` nodes, or checkpointed layers in it)."""
    root = getattr(loss, "grad_fn", None)
    if root is None:
        return []
    ids: dict[Any, int] = {root: 0}
    order = [root]
    for fn in order:  # breadth first; `order` grows as it is walked
        for nxt, _ in fn.next_functions:
            if _inner(nxt) and nxt not in ids:
                ids[nxt] = len(order)
                order.append(nxt)
        if len(order) > MAX_NODES:
            return []
    if any(type(fn).__name__.startswith(CHECKPOINT_NODES) for fn in order):
        return []  # checkpointed: reading its saved tensors would recompute the layers
    return [
        {"id": ids[fn], "op": type(fn).__name__,
         "inputs": [ids.get(n) if _inner(n) else None for n, _ in fn.next_functions],
         "saved": _saved(fn, ids)}
        for fn in order
    ]
