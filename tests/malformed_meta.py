"""Wrongly shaped meta.json files, generated from `MetaSchema` and its blocks' annotations.

Every field of meta.json (and of each block inside it: a try, its change, a phase's GPU
conditions, their spreads...) gets one value of a wrong JSON type, and every required key of a
block is left out once. The cases follow the schema: a field added to `meta_blocks` is covered
without touching the tests.
"""

from __future__ import annotations

import copy
import functools
import types
import typing
from typing import Any, Union, get_args, get_origin, get_type_hints, is_typeddict

from jupyter_gpuprof.store.meta_schema import MetaSchema

Path = tuple[str | int, ...]


def _arms(kind: Any) -> list[Any]:
    """The arms of a union (``X | None``), else the type itself."""
    if get_origin(kind) in (Union, types.UnionType):
        return list(get_args(kind))
    return [kind]


def _strip(kind: Any) -> Any:
    """``Required[X]`` / ``NotRequired[X]`` -> X."""
    while get_origin(kind) in (typing.Required, typing.NotRequired):
        kind = get_args(kind)[0]
    return kind


def _hints(kind: Any) -> dict[str, Any]:
    return {k: _strip(v) for k, v in get_type_hints(kind, include_extras=True).items()}


def required_keys(kind: Any) -> set[str]:
    """A TypedDict's required keys, `Required[...]` read from its (string) annotations."""
    raw = get_type_hints(kind, include_extras=True)
    total = getattr(kind, "__total__", True)
    return {k for k, v in raw.items()
            if get_origin(v) is typing.Required or (total and get_origin(v)
                                                   is not typing.NotRequired)}


def example(kind: Any) -> Any:
    """A valid value of ``kind`` (the first non-null arm of a union)."""
    arms = [a for a in _arms(_strip(kind)) if a is not type(None)]
    kind = arms[0] if arms else None
    origin = get_origin(kind)
    if kind is None:
        return None
    if is_typeddict(kind) or (isinstance(kind, type) and hasattr(kind, "__struct_fields__")):
        return {k: example(v) for k, v in _hints(kind).items()}
    if origin is list:
        return [example(get_args(kind)[0])]
    if origin is dict:
        return {"baseline": example(get_args(kind)[1])}
    return {bool: True, int: 1, float: 1.5, str: "x"}[kind]


def wrong(kind: Any) -> Any:
    """A value of a JSON type that no arm of ``kind`` takes."""
    arms = {get_origin(a) or a for a in _arms(_strip(kind))}
    typed = any(is_typeddict(a) for a in arms)
    for candidate in ("12", {"a": 1}, [1], 7, True):
        takes = {str: str, dict: dict, list: list, int: int, bool: bool}[type(candidate)]
        if takes in arms or (takes is dict and typed) or (takes is int and float in arms):
            continue
        if takes is int and bool in arms and int in arms:
            continue
        return candidate
    raise AssertionError(f"no wrong value for {kind}")


def _cases(kind: Any, value: Any, path: Path) -> list[tuple[Path, str, Any]]:
    """(where, what, new value) for every field under ``value`` (a valid ``kind``)."""
    out: list[tuple[Path, str, Any]] = []
    inner = [a for a in _arms(kind) if a is not type(None)]
    kind = inner[0] if len(inner) == 1 else kind
    origin = get_origin(kind)
    if is_typeddict(kind):
        required = required_keys(kind)
        for key, sub in _hints(kind).items():
            out.append(((*path, key), "wrong type", wrong(sub)))
            if key in required:
                out.append(((*path, key), "missing", KeyError))
            if value.get(key) is not None:
                out += _cases(sub, value[key], (*path, key))
    elif origin is list and value:
        out += _cases(get_args(kind)[0], value[0], (*path, 0))
    elif origin is dict and value:
        out += _cases(get_args(kind)[1], value["baseline"], (*path, "baseline"))
    return out


def base_meta() -> dict[str, Any]:
    """A meta.json where every field and block is filled with a valid value."""
    return copy.deepcopy(_filled())


@functools.cache
def _filled() -> dict[str, Any]:
    meta: dict[str, Any] = example(MetaSchema)
    meta.update(status="complete", owner=None, rank=None, world_size=None, ranks=None,
                schema_version=1)
    meta["baseline"].update(step_ms=[2.0, 2.1, 2.0, 1.9], timing="cuda_event",
                            capture_cost=None, stalls=[])
    meta["training"] = {}
    return meta


def shapes() -> dict[str, tuple[Path, Any]]:
    """Every malformed case, by a readable name: (where in meta.json, the value put there;
    KeyError: the key left out)."""
    out: dict[str, tuple[Path, Any]] = {}
    meta = base_meta()
    for key, kind in get_type_hints(MetaSchema).items():
        if key == "schema_version":
            continue
        out[f"{key}: wrong type"] = ((key,), wrong(kind))
        if meta.get(key) is not None:
            for where, what, value in _cases(kind, meta[key], (key,)):
                out[f"{'.'.join(map(str, where))}: {what}"] = (where, value)
    return out


def malformed(where: Path, value: Any) -> dict[str, Any]:
    """`base_meta` with the value at ``where`` replaced (KeyError: removed)."""
    meta = base_meta()
    node: Any = meta
    for step in where[:-1]:
        node = node[step]
    if value is KeyError:
        del node[where[-1]]
    else:
        node[where[-1]] = value
    return meta
