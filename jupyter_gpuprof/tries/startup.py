"""The `--try` fixes as a script gets them: one switched on at start-up, right after torch imports.

Each fix's start-up half lives with its notebook half in `tries/appliers/<name>.py`; here is
the control (the script re-run unchanged) and the one entry point the try process calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..advice.fix_table import stack_parts
from ..advice.tries import CONTROL
from . import appliers
from .appliers.base import StartupFix


class Unchanged(StartupFix):
    """The control: the script run once more as it is, to see what a fresh process alone
    changes in the step (advice/tries.py holds the fixes' changes to it)."""

    name = CONTROL

    def apply(self) -> None:
        self.applied.append("nothing: the script re-run as it is (the control)")


class Stacked(StartupFix):
    """Several fixes on at once ("loader+graphs"), switched on in order: a step of a stack."""

    def __init__(self, torch: Any, name: str, loop: Mapping[str, Any] | None = None) -> None:
        super().__init__(torch, loop)
        self.name = name
        self.parts = [appliers.load(p).Startup(torch, loop) for p in stack_parts(name)]

    def apply(self) -> None:
        for part in self.parts:
            part.apply()
        self._gather()

    def _gather(self) -> None:
        """What every part changed, its later notes included (a fix notes some changes only
        when the script reaches them: its compile call, its own autocast region)."""
        self.applied[:] = [line for p in self.parts for line in p.applied]

    def problem(self) -> str | None:
        self._gather()
        return next((f"{p.name}: {why}" for p in self.parts if (why := p.problem())), None)


def apply_fix(name: str, torch: Any, loop: Mapping[str, Any] | None = None) -> StartupFix:
    """Switch fix `name` on for this process (`loop`: the run's `training` block); raises with
    a one-line reason when it cannot be."""
    fix: StartupFix
    if name == CONTROL:
        fix = Unchanged(torch, loop)
    elif len(stack_parts(name)) > 1:
        fix = Stacked(torch, name, loop)
    else:
        fix = appliers.load(name).Startup(torch, loop)
    fix.apply()
    return fix
