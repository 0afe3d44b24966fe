"""The capture's schedule fitted to a training shorter than it asks for (a framework's budget).

A Trainer says how many optimizer steps it will run (`frameworks.steps_left`), at the first
optimizer step or through a callback; a capture that needs more is shrunk to fit, so a short
fine-tuning still ends with a complete run. ProfileSession mixes these methods in.
"""

from __future__ import annotations

import contextlib
from dataclasses import replace
from typing import Protocol

from ..store import Run
from ..store.meta_blocks import FrameworkMeta
from .driver import StepDriver
from .frameworks import find_on_stack, steps_left
from .settings import CaptureSettings


def fit_schedule(settings: CaptureSettings, boundaries: int) -> CaptureSettings | None:
    """The settings shrunk to a training of `boundaries` step boundaries; None if they fit.

    The profiler window is kept whole when it can be (it is what the report reads), then the
    baseline (the real step time), and the warm-up gives way first, down to one step.
    """
    if settings.schedule().total <= boundaries:
        return None
    wait, prof_warmup, active = settings.wait, settings.prof_warmup, settings.active
    budget = max(boundaries, 1)
    capture = wait + prof_warmup + active
    if capture > budget:
        wait, prof_warmup = 0, min(prof_warmup, max(0, budget - 2))
        active = max(1, min(active, budget - prof_warmup))
        capture = wait + prof_warmup + active
    rest = max(0, budget - capture)
    warmup = min(settings.warmup, max(1 if rest > 1 else 0, rest - settings.steps))
    steps = min(settings.steps, rest - warmup)
    return replace(settings, warmup=warmup, steps=steps, wait=wait, prof_warmup=prof_warmup,
                   active=active)


class BudgetedSession(Protocol):
    """What fitting reads and changes on the session it is mixed into."""

    settings: CaptureSettings
    driver: StepDriver
    run: Run | None
    framework: FrameworkMeta | None
    fitted: str | None

    def fit_to(self, optimizer_steps: int) -> None:
        """Shrink the schedule to a training this short."""


class StepBudget:
    """Learns which framework runs the training and fits the schedule to its step budget."""

    framework: FrameworkMeta | None  # both set by the session (None) until learned or fitted
    fitted: str | None

    def _learn_framework(self: BudgetedSession) -> None:
        """At the first step: which Trainer runs it, and fit the schedule to its step budget."""
        if self.framework is None:
            with contextlib.suppress(Exception):
                self.framework = find_on_stack()
        left = steps_left(self.framework)
        if left is not None and not self.driver.started:
            self.fit_to(left)

    def use_framework(self: BudgetedSession, framework: FrameworkMeta) -> None:
        """A callback hands in its trainer's description (before the first step)."""
        self.framework = framework
        left = steps_left(framework)
        if left is not None and not self.driver.started:
            self.fit_to(left)

    def fit_to(self: BudgetedSession, optimizer_steps: int) -> None:
        """Shrink warm-up, then baseline, then the profiler window to a training this short."""
        s = self.settings
        fitted = fit_schedule(s, optimizer_steps - 1)  # the first step only starts the count
        if fitted is None:
            return
        self.fitted = (
            f"the training runs {optimizer_steps} optimizer steps, fewer than the "
            f"{s.schedule().total + 1} the capture asks for: using warm-up {fitted.warmup}, "
            f"baseline {fitted.steps}, profiler {fitted.schedule().capture_steps}"
        )
        self.settings = fitted
        self.driver.schedule = fitted.schedule()
        self.driver.reset()
        if self.run is not None:
            self.run.meta.settings = fitted.to_meta()
