"""GpuProfCallback for Lightning: `L.Trainer(..., callbacks=[GpuProfCallback()])`."""

from __future__ import annotations

import os
from typing import Any

try:
    from lightning.pytorch.callbacks import Callback
except ImportError:
    try:
        from pytorch_lightning.callbacks import Callback  # type: ignore[assignment]  # older name
    except ImportError:  # pragma: no cover - exercised only without Lightning installed
        raise ImportError(
            "jupyter_gpuprof.integrations.lightning needs Lightning: pip install lightning"
        ) from None

from ..capture.frameworks import describe_lightning
from .callback_session import CallbackCapture

__all__ = ["GpuProfCallback"]


class GpuProfCallback(Callback):  # type: ignore[misc,unused-ignore]
    """Profiles the Trainer's optimizer steps into a run folder, read like any other run.

    Keyword arguments are the capture's (steps, warmup, wait, prof_warmup, active, ...);
    the schedule shrinks to a training shorter than it. After `fit`, `.run` is the run
    folder and `.report` its report (`analyze=False` skips the analysis).
    """

    def __init__(self, name: str = "lightning", runs_root: str | os.PathLike[str] | None = None,
                 analyze: bool = True, **settings: Any) -> None:
        self.capture = CallbackCapture(name, runs_root, analyze, settings)

    @property
    def run(self) -> Any:
        """The run folder of the last fit (None before it ends)."""
        return self.capture.run

    @property
    def report(self) -> Any:
        """The report of the last fit, when analysed."""
        return self.capture.report

    def on_train_start(self, trainer: Any, pl_module: Any) -> None:
        """Open the run; precision and the step budget are known by now."""
        self.capture.begin(describe_lightning(trainer))

    def on_train_end(self, trainer: Any, pl_module: Any) -> None:
        """Close the run and write its report."""
        self.capture.end()

    def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
        """Keep what was measured when the fit raises."""
        self.capture.end(exception)
