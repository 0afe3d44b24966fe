"""The start-up half of a fix: switched on once for a whole script, right after torch imports.

`jupyter gpuprof run --try` cannot re-run one step of a script with a fix (the notebook's
`--try` does that in the live kernel); it runs the whole command again with one fix switched on
for the process. Each fix says what it changed (`applied`) and, once the steps were measured,
whether it really was in force (`problem()`): a try that changed nothing is reported as such,
never as a measured gain of zero.
"""

from __future__ import annotations

from typing import Any


class StartupFix:
    """One fix switched on for the whole process; each applier module subclasses it."""

    name = ""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.applied: list[str] = []  # what it changed, for the result and the report

    def apply(self) -> None:
        """Switch the fix on (raises with a one-line reason when it cannot be applied here)."""

    def problem(self) -> str | None:
        """Why the measured steps did not run with the fix, or None when they did."""
        return None
