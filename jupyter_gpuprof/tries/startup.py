"""The `--try` fixes as a script gets them: one switched on at start-up, right after torch imports.

Each fix's start-up half lives with its notebook half in `tries/appliers/<name>.py`; here is
the control (the script re-run unchanged) and the one entry point the try process calls.
"""

from __future__ import annotations

from typing import Any

from ..advice.tries import CONTROL
from . import appliers
from .appliers.base import StartupFix


class Unchanged(StartupFix):
    """The control: the script run once more as it is, to see what a fresh process alone
    changes in the step (advice/tries.py holds the fixes' changes to it)."""

    name = CONTROL

    def apply(self) -> None:
        self.applied.append("nothing: the script re-run as it is (the control)")


def apply_fix(name: str, torch: Any) -> StartupFix:
    """Switch fix `name` on for this process; raises with a one-line reason when it cannot be."""
    fix: StartupFix = Unchanged(torch) if name == CONTROL else appliers.load(name).Startup(torch)
    fix.apply()
    return fix
