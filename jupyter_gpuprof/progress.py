"""A live progress line for %%gpuprofile, so a long cell never looks hung.

A background thread reads the step driver's phase and count once per `INTERVAL_S` and updates
one display (text/html + text/plain, so every front end shows it). Nothing runs on the step's
hot path: the baseline's timing is untouched apart from that thread's rare wake-ups.
"""

from __future__ import annotations

import threading
import time
from html import escape
from typing import Any

from .capture.driver import Phase, StepDriver

#: how often the line is refreshed while steps run
INTERVAL_S = 1.0
STYLE = "font-family:monospace;font-size:12px;color:var(--jp-ui-font-color2,#555)"


def describe(driver: StepDriver) -> str:
    """Where the capture is: warm-up / baseline / profiler step n of N."""
    s, n, phase = driver.schedule, driver.n, driver.phase
    if phase is Phase.IDLE:
        return "waiting for the first step (optimizer.step() or jupyter_gpuprof.step())"
    if phase is Phase.WARMUP:
        if n >= s.warmup:  # the steps that take the batches a loader made ready meanwhile
            return f"settling step {min(n - s.warmup + 1, s.settle)}/{s.settle}"
        return f"warm-up step {min(n + 1, s.warmup)}/{s.warmup}"
    if phase is Phase.BASELINE:
        return f"baseline step {min(n - s.baseline_first + 1, s.steps)}/{s.steps} (no profiler)"
    if phase is Phase.CAPTURE:
        k = n - s.baseline_first - s.steps + 1
        return f"profiler on: step {min(k, s.capture_steps)}/{s.capture_steps}"
    return "capture done"


class CaptureProgress:
    """One updating display line: phase and step n/N, then analysis, then the total time."""

    def __init__(self, driver: StepDriver, interval: float = INTERVAL_S) -> None:
        self.driver = driver
        self.interval = interval
        self.t0 = time.perf_counter()
        self._handle: Any = None
        self._last = ""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> CaptureProgress:
        """Show the line and start refreshing it."""
        from IPython.display import display

        self._handle = display(self._bundle(self._text()), raw=True, display_id=True)
        self._thread = threading.Thread(target=self._run, name="gpuprof-progress", daemon=True)
        self._thread.start()
        return self

    def _text(self, what: str | None = None) -> str:
        took = time.perf_counter() - self.t0
        return f"gpuprofile: {what or describe(self.driver)} · {took:.0f} s"

    @staticmethod
    def _bundle(text: str) -> dict[str, str]:
        return {"text/plain": text,
                "text/html": f"<div class='gpuprof-progress' style='{STYLE}'>{escape(text)}</div>"}

    def _show(self, text: str) -> None:
        if text != self._last and self._handle is not None:
            self._last = text
            self._handle.update(self._bundle(text), raw=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._show(self._text())
            except Exception:  # noqa: BLE001 - progress must never break a capture
                return

    def _halt(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2 * self.interval)

    def stage(self, what: str) -> None:
        """Show a step after the capture (saving, analysing)."""
        self._halt()
        self._show(self._text(what))

    def close(self, what: str = "done") -> None:
        """Stop refreshing and leave the final line."""
        self._halt()
        self._show(f"gpuprofile: {what} in {time.perf_counter() - self.t0:.1f} s")
