"""A Kineto trace decoded piece by piece as it is inflated, so memory holds a few pieces of JSON
and never the whole file (a 4 GB trace is read in the memory of its event table).

Kineto writes `{header..., "traceEvents": [` then one `{...}` object per event, separated by
`},` and a newline. A raw newline cannot occur inside a JSON string, so a `},\\n` outside any
string ends an object; whether it ends an *event* (not an object nested in one) is proven by
decoding: every piece is decoded as a JSON array of events, which fails on a cut inside an
event. A file laid out otherwise (a bare array, a byte-order mark, events all on one line,
fields of odd types, or a corrupt file) raises `NotStreamable`, and the caller reads it whole,
with the whole-file path's tolerance and error messages.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import msgspec

from .kineto_json import KinetoEvent, KinetoFile, KinetoHeader

#: how far into the file the `"traceEvents": [` must start (the header is a few KB)
HEAD_LIMIT = 16 << 20
#: a piece of events grown past this without an event boundary: not Kineto's layout
PIECE_LIMIT = 64 << 20
_KEY = b'"traceEvents"'
_OPEN = re.compile(rb'\s*:\s*\[')
_SEP = b"},\n"


class NotStreamable(Exception):
    """The file is not laid out as the stream reader expects: read it whole."""


def _head(chunks: Iterator[bytes | bytearray]) -> tuple[bytes, bytes]:
    """The bytes up to and including the events array's `[`, and the rest read so far."""
    buf = b""
    for chunk in chunks:
        buf += chunk
        if buf.lstrip()[:1] not in (b"{", b""):
            raise NotStreamable("not a JSON object")
        at = buf.find(_KEY)
        if at >= 0:
            m = _OPEN.match(buf, at + len(_KEY))
            if m is not None:
                return buf[:m.end()], buf[m.end():]
            if buf[at + len(_KEY):].strip(b" \t\r\n:"):
                raise NotStreamable("'traceEvents' is not an array")
        if len(buf) > HEAD_LIMIT:
            raise NotStreamable("no 'traceEvents' array near the start")
    raise NotStreamable("no 'traceEvents' array")


def split_events(chunks: Iterable[bytes | bytearray]) -> Iterator[bytes | bytearray]:
    """The head (`{...,"traceEvents": [`), then pieces of whole events as JSON arrays
    (`[{..},\\n {..}]`), then the tail (the last events, `]` and the fields after them)."""
    it = iter(chunks)
    head, first = _head(it)
    yield head
    rest: bytes | bytearray = first
    parts: list[bytes | bytearray] = [rest]
    size, last2 = len(rest), rest[-2:]
    for chunk in it:
        # only the new bytes are searched, and the two before them (a boundary split across)
        # on their own: joining them to the chunk would copy it
        cut: int | None = chunk.rfind(_SEP)
        if cut == -1:
            junction = (last2 + chunk[:2]).rfind(_SEP)
            cut = junction - len(last2) if junction >= 0 else None  # -2 or -1: begun before
        last2 = chunk[-2:] if len(chunk) >= 2 else (last2 + chunk)[-2:]
        parts.append(chunk)
        size += len(chunk)
        if cut is None:
            if size > PIECE_LIMIT:
                raise NotStreamable("no event boundary in a large piece")
            continue
        if cut >= 0:  # the piece built as the JSON array it is decoded as, in one copy
            piece = bytearray(b"[")
            for part in parts[:-1]:
                piece += part
            piece += memoryview(chunk)[:cut + 1]
            rest = chunk[cut + 2:]
        else:  # the boundary began in the bytes before this chunk
            joined = b"".join(parts)
            at = len(joined) - len(chunk) + cut
            piece = bytearray(b"[") + joined[:at + 1]
            rest = joined[at + 2:]
        piece += b"]"
        yield piece
        parts, size, last2 = [rest], len(rest), rest[-2:]
    yield b"".join(parts)


def all_but_last(items: Iterable[bytes | bytearray], last: list[bytes | bytearray]
                 ) -> Iterator[bytes | bytearray]:
    """The items but the last, which is put in `last` (the tail of `split_events`)."""
    it = iter(items)
    held = next(it, None)
    if held is None:
        return
    for item in it:
        yield held
        held = item
    last.append(held)


_events = msgspec.json.Decoder(list[KinetoEvent]).decode
_file = msgspec.json.Decoder(KinetoFile).decode


def _decode(decode: object, data: bytes | bytearray) -> object:
    try:
        return decode(data)  # type: ignore[operator]
    except (msgspec.DecodeError, RecursionError) as exc:  # ValidationError is a DecodeError
        raise NotStreamable(str(exc)) from None


def decode_head(head: bytes | bytearray) -> KinetoFile:
    """The header fields written before the events."""
    return _decode(_file, bytes(head) + b"]}")  # type: ignore[return-value]


def decode_piece(piece: bytes | bytearray) -> list[KinetoEvent]:
    """The events of one piece, `[...]` (NotStreamable when it does not decode as events)."""
    return _decode(_events, piece)  # type: ignore[return-value]


def decode_tail(tail: bytes | bytearray) -> KinetoFile:
    """The last events and the header fields written after them."""
    return _decode(_file, b'{"traceEvents":[' + bytes(tail))  # type: ignore[return-value]


def merged_header(head: KinetoFile, tail: KinetoFile) -> KinetoFile:
    """One header from the fields before and after the events (the earlier one where both
    have a field)."""
    fields = {}
    for name in KinetoHeader.__struct_fields__:
        first, last = getattr(head, name), getattr(tail, name)
        fields[name] = first if first not in (None, []) else last
    return KinetoFile(**fields)
