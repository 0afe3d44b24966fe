"""What a notebook try finds in the kernel's namespace: torch, modules, optimizers, host copies."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


def torch_module() -> Any:
    """torch, imported when a try runs (the magic module must import without it)."""
    import torch

    return torch


def modules(ns: Mapping[str, object]) -> dict[str, torch.nn.Module]:
    """The namespace's nn.Module values by name."""
    from torch.nn import Module

    return {k: v for k, v in ns.items() if isinstance(v, Module) and not k.startswith("_")}


def optimizers(ns: Mapping[str, object]) -> dict[str, torch.optim.Optimizer]:
    """The namespace's optimizers by name."""
    from torch.optim import Optimizer

    return {k: v for k, v in ns.items() if isinstance(v, Optimizer)}


def to_host(x: Any) -> Any:
    """A deep copy with every tensor in host memory: copies of a large model's state must not
    double its GPU memory (restoring copies them back in place)."""
    torch = torch_module()
    if torch.is_tensor(x):
        return x.detach().to("cpu", copy=True)
    if isinstance(x, dict):
        return {k: to_host(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(to_host(v) for v in x)
    return copy.deepcopy(x)
