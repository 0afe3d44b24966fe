"""The CUDA allocator's history during a capture, and a snapshot taken at an out-of-memory error.

Recording runs in the warm-up steps (so an error there has its history) and in the capture's
steps before the traced ones (the profiler's wait and warm-up, phase ranges on), never in the
timed baseline nor the traced steps: each allocation records its Python stack, a host cost
that would read as the user's own in the trace. It is bounded
(`MAX_ENTRIES` events, the newest kept). It is only ever turned on when CUDA is already in use
(`torch.cuda.is_initialized()`): a CPU-only capture never initialises CUDA. An out-of-memory
observer (process-wide: torch cannot detach one, so one dispatcher is attached once) takes the
snapshot at the failing allocation, before the exception unwinds the step's tensors.

The saved file is torch's snapshot plus `jupyter_gpuprof`: the addresses of the parameters,
their gradients and the optimizer's state (walked live from the stepped optimizer), the
parameters' element size and the out-of-memory request, which the analysis names blocks by.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import Any, Protocol, cast

from ..oneline import error_line
from ..store.layout import MEMORY_HISTORY_KEY
from ..store.memory_snapshot import CaptureAdditions, GraphRecord, Snapshot

#: most allocator events kept (the newest): a 6-layer GPT-2 step makes ~1,470 (the H200 recording)
MAX_ENTRIES = 100_000
#: the key of our own additions in the saved snapshot
OURS = MEMORY_HISTORY_KEY


class MemoryApi(Protocol):
    """The torch calls the recorder makes (a fake in tests feeds a recorded snapshot)."""

    def cuda_in_use(self) -> bool: ...
    def record(self, max_entries: int) -> None: ...
    def stop(self) -> None: ...
    def snapshot(self) -> Snapshot: ...
    def attach_oom_observer(self, observer: Any) -> None: ...


class TorchMemoryApi:
    """The real allocator calls (private torch APIs, each guarded by the recorder)."""

    def cuda_in_use(self) -> bool:
        import torch

        return bool(torch.cuda.is_available() and torch.cuda.is_initialized())

    def record(self, max_entries: int) -> None:
        import torch

        torch.cuda.memory._record_memory_history(
            max_entries=max_entries, context="all", stacks="python"
        )

    def stop(self) -> None:
        import torch

        torch.cuda.memory._record_memory_history(enabled=None)

    def snapshot(self) -> Snapshot:
        import torch

        return cast("Snapshot", dict(torch.cuda.memory._snapshot()))

    def attach_oom_observer(self, observer: Any) -> None:
        import torch

        torch._C._cuda_attach_out_of_memory_observer(observer)  # type: ignore[attr-defined,unused-ignore]


class _Observer:
    """The one process-wide OOM observer: hands the failure to the recorder that is active."""

    attached = False
    recorder: MemoryRecorder | None = None

    @classmethod
    def on_oom(cls, device: int, alloc: int, device_alloc: int, device_free: int) -> None:
        recorder = cls.recorder
        if recorder is not None:
            recorder.on_oom(alloc)


def _storages(tensors: list[Any]) -> list[tuple[int, int]]:
    """Each CUDA storage once, as (address, bytes)."""
    seen: dict[int, int] = {}
    for t in tensors:
        if getattr(t, "is_cuda", False):
            s = t.untyped_storage()
            seen[int(s.data_ptr())] = int(s.nbytes())
    return sorted(seen.items())


def live_addresses(optimizer: Any) -> tuple[dict[str, list[tuple[int, int]]], int | None]:
    """The addresses of the optimizer's parameters, their gradients and its state; the
    parameters' element size (the precision activations are kept in without autocast)."""
    params = [p for g in optimizer.param_groups for p in g["params"]]
    grads = [p.grad for p in params if getattr(p, "grad", None) is not None]
    state = [
        v for st in optimizer.state.values() for v in st.values() if hasattr(v, "untyped_storage")
    ]
    sizes = [int(p.element_size()) for p in params if getattr(p, "is_cuda", False)]
    return (
        {
            "parameters": _storages(params),
            "gradients": _storages(grads),
            "optimizer_state": _storages(state),
        },
        max(set(sizes), key=sizes.count) if sizes else None,
    )


class MemoryRecorder:
    """Records the allocator's history for one capture and saves it into the run."""

    def __init__(
        self, enabled: bool = True, api: MemoryApi | None = None, max_entries: int = MAX_ENTRIES
    ) -> None:
        self.enabled = enabled
        self.api: MemoryApi = api if api is not None else TorchMemoryApi()
        self.max_entries = max_entries
        self.recording = False
        self.error: str | None = None
        self.oom_snapshot: Snapshot | None = None
        self.oom_requested: int | None = None
        self.kept: Snapshot | None = None  # the history up to the traced steps
        self._optimizer: Any = None
        self.graph: list[GraphRecord] | None = None  # one recorded step's autograd graph
        self._hooks: Any = None  # autograd_graph.HookWatch while recording

    def start(self) -> None:
        """Record from now on (warm-up, profiled steps); no-op off, on CPU or when recording."""
        if not self.enabled or self.recording:
            return
        try:
            if not self.api.cuda_in_use():
                return
            if not _Observer.attached:
                self.api.attach_oom_observer(_Observer.on_oom)
                _Observer.attached = True
            _Observer.recorder = self
            self.api.record(self.max_entries)
            self.recording = True
            self._watch_hooks(True)
        except Exception as e:  # noqa: BLE001 - the history is optional: say why it is missing
            self.error = f"memory history unavailable: {error_line(e, with_type=True)}"

    def _watch_hooks(self, on: bool) -> None:
        if on and self.graph is None:
            from .autograd_graph import HookWatch

            self._hooks = self._hooks or HookWatch()
            self._hooks.install()
        elif self._hooks is not None:
            self._hooks.remove()

    def pause(self) -> None:
        """Stop recording (the timed baseline runs without it)."""
        self._watch_hooks(False)
        if self.recording:
            self.recording = False
            with contextlib.suppress(Exception):
                self.api.stop()

    def keep(self) -> None:
        """Snapshot the history now and stop recording: the traced steps come next."""
        if not self.recording:
            return
        try:
            self.kept = self.api.snapshot()
        except Exception as e:  # noqa: BLE001
            self.error = f"memory snapshot failed: {error_line(e)}"
        self.pause()

    def close(self) -> None:
        """Stop recording and leave the process-wide observer without a recorder."""
        self.pause()
        if _Observer.recorder is self:
            _Observer.recorder = None

    def note_optimizer(self, optimizer: Any) -> None:
        """The stepped optimizer: its tensors' addresses name the model's memory."""
        if self._optimizer is None and self.enabled:
            with contextlib.suppress(TypeError):
                self._optimizer = weakref.ref(optimizer)

    def note_loss(self, tensors: Any) -> None:
        """At a recorded step's backward, once: its autograd graph with what each node saved
        (`analysis.autocast_dtypes` replays it under autocast)."""
        if not self.recording or self.graph is not None:
            return
        from .autograd_graph import graph_nodes

        if self._hooks is not None and self._hooks.entered:
            self.graph = []  # checkpointed or offloaded: its saved tensors are not read
            self._watch_hooks(False)
            return
        loss = tensors[0] if isinstance(tensors, (tuple, list)) and tensors else tensors
        try:
            self.graph = graph_nodes(loss)
        except Exception as e:  # noqa: BLE001 - the graph is optional: say why it is missing
            self.graph = []
            self.error = f"autograd graph not walked: {error_line(e)}"
        self._watch_hooks(False)

    def on_oom(self, requested: int) -> None:
        """At the failing allocation: keep the snapshot before the step's tensors unwind."""
        if self.oom_snapshot is not None:
            return
        try:
            self.oom_snapshot = self.api.snapshot()
            self.oom_requested = int(requested)
        except Exception as e:  # noqa: BLE001
            self.error = f"memory snapshot at the out-of-memory error failed: {error_line(e)}"

    def result(self, error: str | None = None) -> Snapshot | None:
        """The snapshot to save (the OOM one if there was one) with our additions; stops."""
        snap = self.oom_snapshot if self.oom_snapshot is not None else self.kept
        if snap is None and self.recording:
            try:
                snap = self.api.snapshot()
            except Exception as e:  # noqa: BLE001
                self.error = f"memory snapshot failed: {error_line(e)}"
        self.close()
        if snap is None:
            return None
        ours: CaptureAdditions = {"max_entries": self.max_entries}
        opt = self._optimizer() if self._optimizer is not None else None
        if opt is not None:
            with contextlib.suppress(Exception):
                ours["addresses"], ours["param_element_size"] = live_addresses(opt)
        if self.graph:
            ours["graph"] = self.graph
        if self.oom_snapshot is not None:
            ours["oom"] = {"requested": self.oom_requested, "error": error or ""}
        return cast("Snapshot", {**snap, OURS: ours})
