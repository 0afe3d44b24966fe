"""Events that stall a step now and then, stamped with the step they ran in.

A loop whose median step is fast can still spend most of its wall time in a few long steps:
DataLoader workers started again at every epoch, a checkpoint written with `torch.save`, the
garbage collector's full passes, an evaluation pass. The baseline's step times show the spikes
(analysis/spikes.py); these records say what ran in them. Each hook is one Python call per
event (an epoch, a save, a collection); per batch, while the baseline is timed, only two clock
reads around DataLoader `__next__` kept as they are (the training process's wait for its data,
analysis/loader_pace.py), put in their steps afterwards by the boundaries' host times, so the
baseline stays honest.
"""

from __future__ import annotations

import bisect
import functools
import gc
import time
import weakref
from array import array
from collections import Counter
from collections.abc import Callable
from typing import Any, TypedDict, Unpack

from ..store.meta_blocks import StallMeta
from .capture_cost import COST

#: at most this many events of one kind are kept (a loop saving every step must not grow the
#: meta), so a long run's full GC passes never crowd out its later evaluations or epochs
MAX_EVENTS = 200
#: collections of the younger generations shorter than this are not worth a record (ms)
GC_MIN_MS = 2.0
LOADER_START, LOADER_ITER, SAVE, GC, EVAL = "loader-start", "loader-iter", "save", "gc", "eval"


class StallDetail(TypedDict, total=False):
    """What an event says beyond its step, kind and time (a loader's, a collection's)."""

    workers: int
    persistent: bool
    batches: int | None  # a loader's batches per epoch (None: an iterable dataset)
    epoch: int  # how many times this loader was iterated before (0: its first epoch)
    last_batch: int  # the size of its epoch's last batch when smaller than the others
    generation: int


class BaselineStalls(TypedDict):
    """What the watch adds to meta.json's `baseline`."""

    stalls: list[StallMeta]
    epoch_steps: int | None
    loader_ms: list[float]
    loader_workers: int


def _partial_batch(loader: Any) -> int:
    """The size of a map-style loader's last batch when it is smaller than the others (0: none,
    or not known): its new shapes are autotuned (cudnn.benchmark) or compiled the first time."""
    size = getattr(loader, "batch_size", None)
    if not isinstance(size, int) or size <= 0 or getattr(loader, "drop_last", False):
        return 0
    try:
        n = len(loader.dataset)
    except (TypeError, AttributeError):
        return 0
    return n % size


def loader_stock(workers: Any, prefetch: Any, batches: Any = None) -> int:
    """Batches a DataLoader holds ready (0 without workers): its workers x prefetch_factor
    (torch's default 2), at most an epoch's batches (none of the next epoch is made before the
    loop asks for it)."""
    if not isinstance(workers, int) or workers <= 0:
        return 0
    ahead = workers * (prefetch if isinstance(prefetch, int) and prefetch > 0 else 2)
    return min(ahead, batches) if isinstance(batches, int) and batches > 0 else ahead


def settle_steps(stock: int) -> int:
    """The steps after a pause that take what a loader made ready meanwhile: its stock, and
    one more, whose batch a worker began only when the first of them was taken (it arrives
    short by the time they took); none without a stock."""
    return stock + 1 if stock > 0 else 0


def epoch_batches(loader: Any) -> int | None:
    """An epoch's batches from a DataLoader or its iterator (None: an iterable dataset's)."""
    try:
        return len(loader)
    except Exception:  # noqa: BLE001 - an iterable dataset has none; the user's loop goes on
        return None


class StallWatch:
    """Records DataLoader epochs, `torch.save`, full GC passes and `model.eval()` by step."""

    def __init__(self, step_of: Callable[[], int]) -> None:
        """`step_of`: the index of the baseline step running now (negative before it)."""
        self.step_of = step_of
        self.events: list[StallMeta] = []
        self._kept: Counter[str] = Counter()  # events kept, by kind
        self.epoch_steps: int | None = None  # batches per epoch of the training loader
        self._undo: list[Callable[[], None]] = []
        # a loader iterated -> its epochs so far (weak: a loader made anew each epoch may get
        # the id of the one before it)
        self._loaders: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
        self._gc_t: float | None = None
        self._eval: StallMeta | None = None  # the evaluation running now
        self._eval_t0 = 0.0  # when it began (perf_counter)
        self._fetches = array("q")  # each timed DataLoader __next__: its start, its end (ns)
        self._timing = False  # the baseline runs: its fetches are stamped
        self._workers = 0  # worker processes of the loader waited on
        #: the most batches a loader seen so far holds ready (workers x prefetch_factor)
        self.stock = 0
        self.iterated = 0  # DataLoader iterators made since install()
        self._last_it = 0  # id() of the iterator whose stock was read last (no reference
        # kept: a loop that breaks out of an epoch must not keep its workers alive)

    def _note_stock(self, workers: Any, prefetch: Any, batches: Any = None) -> None:
        """Keep the largest stock of ready batches a loader seen has (`loader_stock`)."""
        self.stock = max(self.stock, loader_stock(workers, prefetch, batches))

    def _record(self, what: str, ms: float, **detail: Unpack[StallDetail]) -> StallMeta:
        event: StallMeta = {"step": int(self.step_of()), "what": what, "ms": round(ms, 3),
                             **detail}
        if self._kept[what] < MAX_EVENTS:
            self._kept[what] += 1
            self.events.append(event)
        return event

    def install(self) -> None:
        """Wrap DataLoader.__iter__, torch.save and Module.train; listen to the collector."""
        import torch
        from torch.utils.data import DataLoader, dataloader

        self._wrap(DataLoader, "__iter__", self._loader_iter)
        self._wrap(dataloader._BaseDataLoaderIter, "__next__", self._loader_next)
        self._wrap(torch, "save", self._save)
        self._wrap(torch.nn.Module, "train", self._train)
        gc.callbacks.append(self._gc)
        self._undo.append(lambda: gc.callbacks.remove(self._gc)
                          if self._gc in gc.callbacks else None)

    def _wrap(self, owner: Any, attr: str, make: Callable[[Any], Any]) -> None:
        original = getattr(owner, attr)
        wrapped = functools.wraps(original)(make(original))
        setattr(owner, attr, wrapped)

        def undo() -> None:
            if getattr(owner, attr) is wrapped:  # nobody wrapped on top of us since
                setattr(owner, attr, original)

        self._undo.append(undo)

    def _loader_iter(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def iterate(loader: Any, *args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            out = original(loader, *args, **kwargs)
            workers = int(getattr(loader, "num_workers", 0) or 0)
            persistent = bool(getattr(loader, "persistent_workers", False))
            epoch = self._loaders.get(loader, 0)
            self._loaders[loader] = epoch + 1
            started = workers > 0 and (epoch == 0 or not persistent)
            batches = epoch_batches(loader)
            self._note_stock(workers, getattr(loader, "prefetch_factor", None), batches)
            self.iterated += 1
            if self.epoch_steps is None:  # the first loader iterated is the training one
                self.epoch_steps = batches
            self._record(LOADER_START if started else LOADER_ITER,
                         (time.perf_counter() - t0) * 1e3, workers=workers,
                         persistent=persistent, batches=batches, epoch=epoch,
                         last_batch=_partial_batch(loader))
            return out

        return iterate

    def _loader_next(self, original: Callable[..., Any]) -> Callable[..., Any]:
        now, stamp = time.perf_counter_ns, self._fetches.append

        def next_batch(it: Any) -> Any:
            if not self._timing:
                if id(it) != self._last_it:  # an iterator made before the capture began too
                    self._last_it = id(it)
                    self._note_stock(getattr(it, "_num_workers", 0),
                                     getattr(it, "_prefetch_factor", None), epoch_batches(it))
                return original(it)
            t0 = now()
            try:
                return original(it)
            finally:
                t1 = now()
                stamp(t0)
                stamp(t1)
                workers = getattr(it, "_num_workers", 0)
                if workers and workers > self._workers:
                    self._workers = workers
                COST.add(now() - t1)  # our bookkeeping only

        return next_batch

    def _save(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def save(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self._record(SAVE, (time.perf_counter() - t0) * 1e3)

        return save

    def _train(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def train(module: Any, mode: bool = True) -> Any:
            now = time.perf_counter()
            if not mode and self._eval is None:
                self._eval = self._record(EVAL, 0.0)
                self._eval_t0 = now
            elif mode and self._eval is not None:
                self._eval["ms"] = round((now - self._eval_t0) * 1e3, 3)
                self._eval = None
            return original(module, mode)

        return train

    def _gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_t = time.perf_counter()
            return
        if self._gc_t is None:
            return
        ms = (time.perf_counter() - self._gc_t) * 1e3
        self._gc_t = None
        generation = int(info.get("generation", 0))
        if generation == 2 or ms >= GC_MIN_MS:
            self._record(GC, ms, generation=generation)

    def time_fetches(self, on: bool) -> None:
        """Stamp each DataLoader `__next__` from now on (the baseline's steps), or stop."""
        self._timing = on

    def remove(self) -> None:
        """Put back what install() wrapped."""
        while self._undo:
            self._undo.pop()()

    def to_meta(self, boundaries_ns: list[int]) -> BaselineStalls:
        """meta.json's `baseline.stalls`, `epoch_steps`, and `loader_ms` (the wait in
        DataLoader `__next__` of each baseline step, the steps between the host times of the
        baseline's boundaries, `boundaries_ns`: a fetch belongs to the step it ends in; empty
        when the loop read no DataLoader) with `loader_workers`."""
        events = [e.copy() for e in self.events]
        n_steps = max(0, len(boundaries_ns) - 1)
        waits = [0.0] * n_steps if self._fetches and n_steps else []
        f = self._fetches
        for t0, t1 in zip(f[::2], f[1::2], strict=True):
            k = bisect.bisect_left(boundaries_ns, t1) - 1
            if 0 <= k < n_steps:
                waits[k] += (t1 - t0) / 1e6
        waits = [round(w, 4) for w in waits]
        return {"stalls": events, "epoch_steps": self.epoch_steps, "loader_ms": waits,
                "loader_workers": self._workers}
