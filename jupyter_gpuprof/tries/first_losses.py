"""The first losses of a script under `jupyter gpuprof run --try`, the original's and each try's.

The notebook's `--try` shows what a precision change costs in accuracy: the loss of its first
steps against the original's from the same starting state. A script run again in a fresh
process gets the same comparison here: the loss is the scalar the training calls `.backward()`
on, and its first `LOSS_STEPS` values are read in warm-up steps (the read-back costs the timed
steps nothing). Both processes are seeded alike before the script draws a random number
(`seed_everything`), so a script that seeds nothing starts the original and every try from the
same weights and data order; a script's own seed overrides it. `run --try` names the label
($JUPYTER_GPUPROF_TRY_LOSSES, launcher/autorun.py): "original" for the run, the fix for a try.
"""

from __future__ import annotations

import random
import sys
import threading
from typing import Any

from ..store.try_files import write_losses
from .notebook import LOSS_STEPS

#: the seed both the run and its tries start from
SEED = 0


def seed_everything(torch: Any) -> None:
    """Seed torch (every device), Python's and, where imported, numpy's generators alike."""
    torch.manual_seed(SEED)
    random.seed(SEED)
    if (np := sys.modules.get("numpy")) is not None:
        np.random.seed(SEED)


class FirstLosses:
    """Records the first scalar losses `.backward()` is called on (main thread), then saves."""

    def __init__(self, torch: Any, run_dir: str, label: str, n: int = LOSS_STEPS) -> None:
        """`label`: "original" or the fix name (the file is tries/<label>.losses.json)."""
        self.run_dir, self.label, self.n = run_dir, label, n
        self.values: list[float] = []
        self.tensor_class = torch.Tensor
        self.original = torch.Tensor.backward

    def install(self) -> FirstLosses:
        """Wrap `Tensor.backward`: each call offers its tensor to `record` first."""
        recorder, original = self, self.original

        def backward(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            recorder.record(tensor)
            return original(tensor, *args, **kwargs)

        self.tensor_class.backward = backward
        return self

    def record(self, tensor: Any) -> None:
        """Keep the value of a scalar loss while fewer than `n` are in; save at `n`."""
        if len(self.values) >= self.n or threading.current_thread() is not threading.main_thread():
            return
        try:
            if tensor.numel() != 1:
                return
            self.values.append(float(tensor.detach().float().item()))
        except Exception:  # noqa: BLE001 - never break the user's backward for a record
            return
        if len(self.values) == self.n:
            write_losses(self.run_dir, self.label, self.values)


def record_first_losses(run_dir: str, label: str) -> FirstLosses:
    """Seed this process and start recording its first losses (torch is imported by now)."""
    import torch

    seed_everything(torch)
    return FirstLosses(torch, run_dir, label).install()
