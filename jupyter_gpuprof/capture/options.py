"""The capture's step counts, defined once: defaults and help for every way to start a capture.

`%%gpuprofile`, `jupyter gpuprof run`, `profile()`, `CaptureSettings` and the driver's
`Schedule` all read these, so a default changed here changes everywhere (they used to be
written out in five places).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: steps run first and left out of every figure (compilation, allocator and cuDNN caches)
WARMUP = 5
#: baseline steps timed without the profiler (the real step time)
STEPS = 30
#: torch.profiler schedule(wait, warmup, active): skipped, warmed up, recorded steps
WAIT = 1
PROF_WARMUP = 2
ACTIVE = 5


@dataclass(frozen=True)
class StepOption:
    """One step-count option as both command lines spell it."""

    flag: str
    default: int
    help: str


STEP_OPTIONS = (
    StepOption("--steps", STEPS, "baseline steps timed without the profiler"),
    StepOption("--warmup", WARMUP, "steps run first and excluded (compilation, caches)"),
    StepOption("--wait", WAIT, "profiler schedule: steps skipped after it starts"),
    StepOption("--prof-warmup", PROF_WARMUP, "profiler schedule: warm-up steps"),
    StepOption("--active", ACTIVE, "profiler schedule: steps recorded in the trace"),
)


def add_step_options(add_argument: Callable[..., Any]) -> None:
    """Declare every step-count option with an argparse-style `add_argument`."""
    for option in STEP_OPTIONS:
        add_argument(option.flag, type=int, default=option.default, help=option.help)
