"""Decoding JSON from run folders and requests strictly: bounded nesting, finite numbers only.

Python's `json` and msgspec both overflow the stack on 100,000 nested arrays, and `json`
accepts `NaN`/`Infinity`; one such file must not break the list of every run, so the depth is
checked before decoding and non-finite numbers are refused (msgspec's decoder does that).
"""

from __future__ import annotations

import math
import re
from typing import Any, TypeVar

import msgspec

from ..oneline import error_line

MAX_DEPTH = 64
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKETS = re.compile(rb"[\[\]{}]")
T = TypeVar("T")


class BadJson(ValueError):
    """JSON the store will not use; the message is one line."""


def check_depth(data: bytes, limit: int = MAX_DEPTH) -> None:
    """BadJson if arrays/objects nest deeper than ``limit`` (checked without decoding)."""
    if data.count(b"[") + data.count(b"{") <= limit:
        return
    depth = 0
    for m in _BRACKETS.finditer(_STRINGS.sub(b"", data)):
        depth += 1 if m.group() in (b"[", b"{") else -1
        if depth > limit:
            raise BadJson(f"JSON nested deeper than {limit} levels")


def decode(data: bytes, schema: type[Any] | None = None) -> Any:
    """Strictly decoded JSON, checked against ``schema`` (a msgspec type) when given.

    Returns the plain decoded value (dicts and lists, unknown keys kept), never the schema
    object: the schema only says whether the value can be used.
    """
    check_depth(data)
    try:
        # msgspec refuses NaN/Infinity tokens and numbers beyond the float range (1e400), so a
        # decoded value never holds a non-finite number: no second walk over it is needed
        value = msgspec.json.decode(data)
    except (msgspec.DecodeError, RecursionError) as e:
        raise BadJson(f"not valid JSON ({error_line(e)})") from None
    if schema is not None:
        try:
            msgspec.convert(value, schema)
        except msgspec.ValidationError as e:
            raise BadJson(error_line(e)) from None
    return value


def finite_or_none(x: Any) -> Any:
    """A JSON-safe copy of a reply: non-finite floats become null (strict JSON has no NaN)."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: finite_or_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite_or_none(v) for v in x]
    return x
