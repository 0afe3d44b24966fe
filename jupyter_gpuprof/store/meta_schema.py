"""The typed shape of meta.json that readers rely on (msgspec checks it in one pass).

Only types are checked: every field has a default, so older runs that lack a key still load,
and unknown keys are kept by the reader. A wrongly shaped entry of a block the run can be
shown without (a try, a phase's conditions) is dropped by `salvage` and said in the run's
list row and report; any other field of the wrong type makes the run `broken`.
The blocks are the TypedDicts of `meta_blocks`, which `RunMeta` holds.
"""

from __future__ import annotations

import functools
from typing import Any, get_args, get_origin, get_type_hints

import msgspec

from .json_checks import BadJson
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
    cupti_kept: str | None = None


#: blocks a run can be shown without: a wrongly shaped entry of one (a try, a phase's GPU
#: conditions) is dropped and said, never the whole run, whose trace and baseline still stand
SALVAGED = ("tries", "conditions", "stack", "callsites", "profiler_messages", "framework",
            "training", "owner")


@functools.cache
def _field_types() -> dict[str, Any]:
    """MetaSchema's field types, resolved once (each resolution compiles its annotations)."""
    return get_type_hints(MetaSchema)


def _misfit(value: Any, kind: Any) -> str | None:
    """Why ``value`` does not fit the type ``kind`` (msgspec's one line), else None."""
    try:
        msgspec.convert(value, kind)
    except msgspec.ValidationError as e:
        return str(e).splitlines()[0] if str(e) else "wrong shape"
    return None


def _where(message: str, where: str) -> str:
    """msgspec's ``at `$.x` `` path, rooted at the block (``at `tries[0].x` ``)."""
    return message.replace("`$", f"`{where}") if "`$" in message else f"{message} - at `{where}`"


def salvage(value: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """meta.json's object with its wrongly shaped `SALVAGED` entries taken out, and one line
    per entry taken out (empty when the whole object fits `MetaSchema`).

    A list block (tries) and a by-name block (conditions by phase) lose only their bad
    entries. BadJson (one line) when what is left still does not fit (a wrongly typed status).
    """
    if _misfit(value, MetaSchema) is None:
        return value, []
    hints = _field_types()
    kept, problems = dict(value), []
    for name in SALVAGED:
        if name not in kept:
            continue
        kind, item = hints[name], kept[name]
        origin, args = get_origin(kind), get_args(kind)
        if origin is list and isinstance(item, list):
            good = []
            for i, entry in enumerate(item):
                why = _misfit(entry, args[0])
                if why is None:
                    good.append(entry)
                else:
                    problems.append(f"{name}[{i}] ignored: {_where(why, f'{name}[{i}]')}")
            kept[name] = good
        elif origin is dict and isinstance(item, dict):
            good_map = {}
            for key, entry in item.items():
                why = _misfit({key: entry}, kind)
                if why is None:
                    good_map[key] = entry
                else:
                    problems.append(f"{name}.{key} ignored: {_where(why, name)}")
            kept[name] = good_map
        elif (why := _misfit(item, kind)) is not None:
            problems.append(f"{name} ignored: {_where(why, name)}")
            del kept[name]
    why = _misfit(kept, MetaSchema)
    if why is not None:
        raise BadJson(why)
    return kept, problems
