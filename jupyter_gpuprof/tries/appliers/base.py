"""The start-up half of a fix: switched on once for a whole script, right after torch imports.

`jupyter gpuprof run --try` cannot re-run one step of a script with a fix (the notebook's
`--try` does that in the live kernel); it runs the whole command again with one fix switched on
for the process. Each fix says what it changed (`applied`) and, once the steps were measured,
whether it really was in force (`problem()`): a try that changed nothing is reported as such,
never as a measured gain of zero.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def eager_only(torch: Any, hook: Callable[..., None]) -> Callable[..., None]:
    """A global module hook that Dynamo traces as nothing: a model the script compiles calls
    the hooks while Dynamo traces it, and a hook holding modules failed there ("… is already
    tracked for mutation", nanoGPT with --compile=True). `torch.compiler.disable` instead
    would break the graph at every module call, and the try would measure the breaks."""
    compiling = torch.compiler.is_compiling

    def hook_outside_graphs(*args: Any) -> None:
        if not compiling():
            hook(*args)

    return hook_outside_graphs


class StartupFix:
    """One fix switched on for the whole process; each applier module subclasses it."""

    name = ""

    def __init__(self, torch: Any, loop: Mapping[str, Any] | None = None) -> None:
        """`loop`: what the run's capture counted of the training loop (meta's `training`:
        optimizers per step, micro-batches…), for a fix that must know where an iteration
        ends before the first one has ended."""
        self.torch = torch
        self.loop: Mapping[str, Any] = loop or {}
        self.applied: list[str] = []  # what it changed, for the result and the report

    def apply(self) -> None:
        """Switch the fix on (raises with a one-line reason when it cannot be applied here)."""

    def problem(self) -> str | None:
        """Why the measured steps did not run with the fix, or None when they did."""
        return None
