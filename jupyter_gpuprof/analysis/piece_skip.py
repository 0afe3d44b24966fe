"""A piece of a streamed trace with no event the tables read, counted in a light decode.

Kineto writes its events grouped by kind: the Python function calls come in one block of
tens of megabytes (a quarter of the GPT-2 trace's events) that the tables skip unless asked.
Such a piece is decoded into just each event's kind and the fields the full decode reads as
text (so a byte the full decode would refuse as malformed is refused here too), about a third
of the full decode's work; anything else in it falls back to the full decode.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress
from operator import attrgetter

import msgspec

from . import trace_formats as formats
from .kineto_json import KEPT_CATEGORIES, Id

#: the categories the table keeps (with keep_python and without), and their old names
_READ = {keep: frozenset((*KEPT_CATEGORIES[:len(KEPT_CATEGORIES) - (not keep)],
                          *formats.CATEGORY_ALIASES))
         for keep in (False, True)}
#: the phases whose events are read by name (allocator instants, thread names)
_BY_NAME, _NAMES = frozenset(("i", "M")), frozenset(("[memory]", "thread_name"))
#: how far into a piece its first event is looked for (not found: the piece is tried whole)
_FIRST_LIMIT = 1 << 16
_SEP = b"},\n"


class _KindArgs(msgspec.Struct, gc=False):
    """The `args` fields the full decode may read as text (`kineto_json.KinetoArgs`)."""

    stream: Id | str = -1
    nbytes: Id | str = msgspec.field(default=-1, name="bytes")


class _Kind(msgspec.Struct, gc=False):
    """An event's kind, and its fields the full decode may read as text."""

    ph: str = ""
    cat: str = ""
    name: str = ""
    pid: Id | str = -1
    tid: Id | str = -1
    args: _KindArgs | None = None


_kinds = msgspec.json.Decoder(list[_Kind]).decode


def _none_read(events: list[_Kind], keep_python: bool) -> Counter[str] | None:
    """The events' categories counted when the tables read none of the events, else None."""
    counts = Counter(map(attrgetter("cat"), events))
    if not _READ[keep_python].isdisjoint(counts):
        return None
    by_name = compress(events, map(_BY_NAME.__contains__, map(attrgetter("ph"), events)))
    if not _NAMES.isdisjoint(map(attrgetter("name"), by_name)):
        return None
    return counts


def skipped_counts(piece: bytes | bytearray, keep_python: bool) -> tuple[int, Counter[str]] | None:
    """(events, their categories counted) of a piece (`[{..},\\n {..}]`) whose events the
    tables all skip; None when one is read, or the light decode fails (the full decode then
    reads the piece, or says why it cannot)."""
    cut = piece.find(_SEP, 0, _FIRST_LIMIT)
    try:
        if cut >= 0 and _none_read(_kinds(bytes(piece[:cut + 1]) + b"]"), keep_python) is None:
            return None  # its first event is read: most likely a piece of read events
        events = _kinds(piece)
    except (msgspec.DecodeError, RecursionError):
        return None
    counts = _none_read(events, keep_python)
    return None if counts is None else (len(events), counts)
