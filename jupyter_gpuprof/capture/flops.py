"""FLOPs of one training step, counted on the last warm-up step so no timed step pays for it."""

from __future__ import annotations

from typing import Any


class StepFlops:
    """Counts FLOPs between begin() and end() with FlopCounterMode; failures are kept as reasons."""

    def __init__(self) -> None:
        self.flops: int | None = None
        self.error: str | None = None
        self._mode: Any = None

    def begin(self) -> None:
        """Start counting (at the boundary before the last warm-up step)."""
        try:
            from torch.utils.flop_counter import FlopCounterMode

            mode = FlopCounterMode(display=False)
            mode.__enter__()
            self._mode = mode
        except Exception as e:  # noqa: BLE001 - FLOPs are optional; say why they are missing
            self.error = f"FLOP counting unavailable: {type(e).__name__}: {e}"

    def end(self) -> None:
        """Stop counting and keep the total."""
        mode, self._mode = self._mode, None
        if mode is None:
            return
        try:
            mode.__exit__(None, None, None)
            self.flops = int(mode.get_total_flops())
        except Exception as e:  # noqa: BLE001
            self.error = f"FLOP counting failed: {type(e).__name__}: {e}"

    def cancel(self) -> None:
        """Stop counting without keeping a total (the step was not a whole step)."""
        self.end()
        self.flops = None

    @property
    def active(self) -> bool:
        return self._mode is not None
