"""The typed shape of meta.json that readers rely on (msgspec checks it in one pass).

Only types are checked: every field has a default, so older runs that lack a key still load,
and unknown keys are kept by the reader. A field of the wrong type makes the run `broken`.
"""

from __future__ import annotations

from typing import Any

import msgspec


class StallSchema(msgspec.Struct):
    """One event that may stall a step (capture/stalls.py), by the baseline step it ran in."""

    step: int
    what: str
    ms: float = 0.0
    workers: int | None = None
    persistent: bool | None = None
    generation: int | None = None
    batches: int | None = None  # a loader's batches per epoch


class BaselineSchema(msgspec.Struct):
    """meta.json's `baseline`: the unprofiled step times."""

    step_ms: list[float] = []
    timing: str | None = None
    warmup_ms: list[float] = []
    host_probe_ms: float | None = None  # one step's host time from an empty GPU queue
    stalls: list[StallSchema] = []  # loader epochs, saves, GC passes, evals
    epoch_steps: int | None = None  # batches per epoch of the training DataLoader
    loader_ms: list[float] = []  # each baseline step's wait in DataLoader __next__
    loader_workers: int = 0  # worker processes of the loader waited on


class EnvSchema(msgspec.Struct):
    """The `env` fields that the list shows and searches."""

    gpu_name: str | None = None


class OwnerSchema(msgspec.Struct):
    """Which process writes the run (see store/owner.py)."""

    pid: int
    host: str
    started: int | None = None


class CallSiteSchema(msgspec.Struct):
    """One user call site of torch (capture/callsites.py)."""

    call: str
    file: str
    line: int
    code: str = ""
    calls: int = 0
    cell: bool = False


class MetaSchema(msgspec.Struct):
    """meta.json (and meta.rank<R>.json), as `RunMeta` reads it."""

    schema_version: int = 1
    id: str = ""
    name: str = ""
    created: str = ""
    status: str = "running"
    error: str | None = None
    settings: dict[str, Any] = {}
    env: EnvSchema = msgspec.field(default_factory=EnvSchema)
    code: str = ""
    tags: list[str] = []
    baseline: BaselineSchema = msgspec.field(default_factory=BaselineSchema)
    profiled_step_ms: list[float] = []
    flops_per_step: float | None = None
    max_memory_allocated_bytes: int | None = None
    flops_error: str | None = None
    rank: int | None = None
    world_size: int | None = None
    ranks: list[int] | None = None
    owner: OwnerSchema | None = None
    training: dict[str, Any] = {}
    framework: dict[str, Any] = {}
    conditions: dict[str, Any] = {}
    tries: list[dict[str, Any]] = []
    callsites: list[CallSiteSchema] = []
