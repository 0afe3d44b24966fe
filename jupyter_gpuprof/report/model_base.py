"""The base of every block of the report summary (a msgspec struct)."""

from __future__ import annotations

import msgspec


class Model(msgspec.Struct):
    """Base of every summary block (fields encode in declaration order)."""
