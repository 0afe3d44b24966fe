"""What a capture was asked to do (step counts, profiler options, mode), as stored in meta.json."""

from __future__ import annotations

from dataclasses import dataclass

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
    memory_history: bool = True  # the allocator's history (CUDA only): memory_record.py
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
                "memory_history": self.memory_history,
                "ranks": None if self.ranks is None else list(self.ranks),
                "schedule": {"wait": self.wait, "warmup": self.prof_warmup,
                             "active": self.active}}

