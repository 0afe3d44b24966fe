"""What a capture was asked to do (step counts, profiler options, mode), as stored in meta.json."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..store.meta_blocks import SettingsMeta
from . import options
from .driver import Schedule
from .ranks import parse_ranks

MODES = ("body", "loop", "script", "auto")


@dataclass
class CaptureSettings:
    """What the user asked for; stored in meta.json as `settings`."""

    steps: int = options.STEPS
    warmup: int = options.WARMUP
    wait: int = options.WAIT
    prof_warmup: int = options.PROF_WARMUP
    active: int = options.ACTIVE
    record_shapes: bool = True
    profile_memory: bool = True
    with_stack: bool = False
    phases: bool = True
    count_flops: bool = True
    mode: str = "body"
    ranks: list[int] | None = None  # ranks of a distributed job that capture (None: all)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        self.ranks = parse_ranks(self.ranks)
        self.schedule()  # validates the counts

    def schedule(self) -> Schedule:
        return Schedule(self.warmup, self.steps, self.wait, self.prof_warmup, self.active)

    def to_meta(self) -> SettingsMeta:
        return {"steps": self.steps, "warmup": self.warmup, "record_shapes": self.record_shapes,
                "profile_memory": self.profile_memory, "with_stack": self.with_stack,
                "phases": self.phases, "count_flops": self.count_flops, "mode": self.mode,
                "ranks": None if self.ranks is None else list(self.ranks),
                "schedule": {"wait": self.wait, "warmup": self.prof_warmup,
                             "active": self.active}}


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
