"""loader: DataLoaders with worker processes, pinned memory and prefetch."""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from ...advice.thresholds import LOADER_PREFETCH, MAX_LOADER_WORKERS
from ..namespace import torch_module
from .base import StartupFix

if TYPE_CHECKING:
    from torch.utils.data import DataLoader


def rebuild_loaders(ns: dict[str, object], cuda: bool) -> list[str]:
    """The namespace's DataLoaders rebuilt with workers, pinned memory and prefetch."""
    dl: type[DataLoader[Any]] = torch_module().utils.data.DataLoader
    rebuilt: dict[int, DataLoader[Any]] = {}
    names = []
    for k, v in list(ns.items()):
        if isinstance(v, dl):
            new = dl(v.dataset, batch_size=v.batch_size, sampler=v.sampler,
                     collate_fn=v.collate_fn, drop_last=v.drop_last,
                     num_workers=min(MAX_LOADER_WORKERS, os.cpu_count() or 1), pin_memory=cuda,
                     persistent_workers=True, prefetch_factor=LOADER_PREFETCH)
            rebuilt[id(v.dataset)] = new
            ns[k] = new
            names.append(k)
    for k, v in list(ns.items()):  # iterators the step calls next() on
        ds = getattr(v, "_dataset", None)
        if ds is not None and id(ds) in rebuilt and hasattr(v, "__next__"):
            ns[k] = iter(rebuilt[id(ds)])
            names.append(k)
    if not names:
        raise LookupError("no DataLoader in the notebook's namespace to rebuild")
    return names


@contextlib.contextmanager
def notebook(ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> Iterator[Callable[[], object]]:
    """The step reading from rebuilt loaders (the caller's KernelState rebinds the originals)."""
    rebuild_loaders(ns, cuda)
    yield step


class LoaderOptions(TypedDict, total=False):
    """The DataLoader arguments the fix sets (only those it changes)."""

    num_workers: int
    pin_memory: bool
    persistent_workers: bool
    prefetch_factor: int


class Startup(StartupFix):
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

    def _faster(self, given: Mapping[str, Any]) -> LoaderOptions:
        """The loader options to change: those left at torch's defaults, and fewer workers
        than the fix asks for (the sampler's order, and so the data, stay the same). `given`:
        the DataLoader call's own arguments, any values the user passed (inspect's bound
        arguments)."""
        iterable = isinstance(given.get("dataset"), self.torch.utils.data.IterableDataset)
        if iterable or given.get("batch_sampler") is not None:
            return {}  # workers would each yield the whole iterable: not the same data
        out: LoaderOptions = {}
        workers = given.get("num_workers", 0)
        enough = min(MAX_LOADER_WORKERS, os.cpu_count() or 1)
        if workers < enough:  # fewer workers than the fix's text asks for: the loader's pace
            workers = out["num_workers"] = enough
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
