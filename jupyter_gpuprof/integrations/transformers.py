"""GpuProfCallback for the Hugging Face Trainer: `Trainer(..., callbacks=[GpuProfCallback()])`."""

from __future__ import annotations

import os
from typing import Any

try:
    from transformers import TrainerCallback
except ImportError:  # pragma: no cover - exercised only without transformers installed
    raise ImportError(
        "jupyter_gpuprof.integrations.transformers needs transformers: pip install transformers"
    ) from None

from ..capture.frameworks import describe_hf
from .callback_session import CallbackCapture

__all__ = ["GpuProfCallback"]


class GpuProfCallback(TrainerCallback):  # type: ignore[misc,unused-ignore]
    """Profiles the Trainer's optimizer steps into a run folder, read like any other run.

    Keyword arguments are the capture's (steps, warmup, wait, prof_warmup, active, ...);
    the schedule shrinks to a training shorter than it. After training, `.run` is the run
    folder and `.report` its report (`analyze=False` skips the analysis).
    """

    def __init__(self, name: str = "trainer", runs_root: str | os.PathLike[str] | None = None,
                 analyze: bool = True, **settings: Any) -> None:
        self.capture = CallbackCapture(name, runs_root, analyze, settings)

    @property
    def run(self) -> Any:
        """The run folder of the last training (None before it ends)."""
        return self.capture.run

    @property
    def report(self) -> Any:
        """The report of the last training, when analysed."""
        return self.capture.report

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Open the run; TrainingArguments and max_steps are known by now."""
        info = describe_hf(_Seen(args, state))
        self.capture.begin(info)

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        """Close the run and write its report."""
        self.capture.end()


class _Seen:
    """What describe_hf reads from a Trainer, as a callback sees it (args and state)."""

    def __init__(self, args: Any, state: Any) -> None:
        self.args = args
        self.state = state
