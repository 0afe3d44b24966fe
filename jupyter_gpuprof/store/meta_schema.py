"""The typed shape of meta.json that readers rely on (msgspec checks it in one pass).

Only types are checked: every field has a default, so older runs that lack a key still load,
and unknown keys are kept by the reader. A field of the wrong type makes the run `broken`.
The blocks are the TypedDicts of `meta_blocks`, which `RunMeta` holds.
"""

from __future__ import annotations

import msgspec

from .meta_blocks import (
    BaselineMeta,
    CallSiteMeta,
    EnvMeta,
    FrameworkMeta,
    OwnerMeta,
    PhaseConditionsMeta,
    SettingsMeta,
    StackMeta,
    TrainingMeta,
    TryMeta,
)


class MetaSchema(msgspec.Struct):
    """meta.json (and meta.rank<R>.json), as `RunMeta` reads it."""

    schema_version: int = 1
    id: str = ""
    name: str = ""
    created: str = ""
    status: str = "running"
    error: str | None = None
    settings: SettingsMeta = {}
    env: EnvMeta = {}
    code: str = ""
    tags: list[str] = []
    baseline: BaselineMeta = {}
    profiled_step_ms: list[float] = []
    flops_per_step: float | None = None
    max_memory_allocated_bytes: int | None = None
    flops_error: str | None = None
    rank: int | None = None
    world_size: int | None = None
    ranks: list[int] | None = None
    owner: OwnerMeta | None = None
    training: TrainingMeta = {}
    framework: FrameworkMeta = {}
    conditions: dict[str, PhaseConditionsMeta] = {}  # by phase: baseline, capture
    tries: list[TryMeta] = []
    stack: StackMeta | None = None
    callsites: list[CallSiteMeta] = []
    profiler_messages: list[str] = []
