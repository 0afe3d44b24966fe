"""The types a notebook's expressions have, read from the code's own annotations.

`notebook_calls.py` walks a notebook's cells; here is what it knows of a value: a class of this
package and its members (the Report's attributes and properties, the advice's dataclasses, the
summary's msgspec structs, read by key as `to_json()` gives them), a method not called yet, what
iterating a list gives; what the code does not type is `UNKNOWN`, never guessed.
"""

from __future__ import annotations

import dataclasses
import inspect
import types
import typing
from dataclasses import dataclass
from typing import Any

import msgspec

from jupyter_gpuprof.report import build

PACKAGE = "jupyter_gpuprof"


class Unknown:
    """A value the code does not type: nothing about it is checked."""


UNKNOWN: Any = Unknown


@dataclass(frozen=True)
class Method:
    """A bound method of a typed class, not called yet."""

    owner: Any
    name: str


@dataclass(frozen=True)
class Keyed:
    """A summary struct as `to_json()` gives it: a dict, read by key (`s["steps"]`)."""

    type: Any


@dataclass(frozen=True)
class Iterable:
    """A generator or comprehension: what iterating it gives."""

    item: Any


def hints_of(obj: Any) -> dict[str, Any]:
    """Resolved annotations of a class or function ({} where they cannot be resolved)."""
    try:
        return typing.get_type_hints(obj)
    except Exception:  # noqa: BLE001 - forward references the module does not import
        try:
            return typing.get_type_hints(obj, globalns=vars(build))
        except Exception:  # noqa: BLE001
            return {}


def strip_optional(t: Any) -> Any:
    """`X | None` -> X; other unions cannot be checked."""
    if isinstance(t, types.UnionType) or typing.get_origin(t) is typing.Union:
        rest = [a for a in typing.get_args(t) if a is not type(None)]
        return rest[0] if len(rest) == 1 else UNKNOWN
    return t


def is_ours(t: Any) -> bool:
    """A class of this package: its attributes are checked."""
    return inspect.isclass(t) and t.__module__.startswith(PACKAGE)


def item_of(t: Any) -> Any:
    """What indexing or iterating a list type gives."""
    if isinstance(t, Keyed):
        return as_keyed(item_of(t.type))
    t = strip_optional(t)
    if isinstance(t, Iterable):
        return t.item
    if typing.get_origin(t) in (list, tuple) and typing.get_args(t):
        return typing.get_args(t)[0]
    return UNKNOWN


def as_keyed(t: Any) -> Any:
    """The dict form of a summary type (structs and lists of them); other types as they are."""
    inner = strip_optional(t)
    if is_struct(inner) or typing.get_origin(inner) in (list, tuple):
        return Keyed(t)
    return t


#: what a dict answers besides its keys
DICT_METHODS = {"get", "keys", "items", "values", "copy"}


def is_struct(t: Any) -> bool:
    """Types read by key in `to_json()` output: the summary's structs."""
    return inspect.isclass(t) and issubclass(t, msgspec.Struct)


def member(t: Any, name: str) -> tuple[bool, Any]:
    """(exists, its type) for attribute `name` of class `t`."""
    if is_struct(t):
        for f in msgspec.structs.fields(t):
            if f.name == name:
                return True, f.type
    hints = hints_of(t)
    if name in hints:
        return True, hints[name]
    if dataclasses.is_dataclass(t) and name in {f.name for f in dataclasses.fields(t)}:
        return True, UNKNOWN
    try:
        raw = inspect.getattr_static(t, name)
    except AttributeError:
        return False, UNKNOWN
    if isinstance(raw, property):
        return True, hints_of(raw.fget).get("return", UNKNOWN)
    if inspect.isfunction(raw):
        return True, Method(t, name)
    return True, UNKNOWN
