"""The one-line form of an error, defined once for every edge (CLI, magic, server, meta.json).

Errors reach users as one line, never a traceback wall; each edge used to cut the message
itself, with small differences. A leaf module (nothing of ours) so the store can use it too.
"""

from __future__ import annotations


def first_line(text: object) -> str | None:
    """The first non-blank line of a message, stripped; None when there is no text."""
    if not isinstance(text, str):
        return None
    for line in text.strip().splitlines():
        if line.strip():
            return line.strip()
    return None


def error_line(exc: BaseException, *, with_type: bool = False) -> str:
    """An exception as one line: the message's first line (with `Type: ` in front when asked,
    as meta.json's error field wants), else the exception's type name."""
    line = first_line(str(exc))
    if line is None:
        return type(exc).__name__
    return f"{type(exc).__name__}: {line}" if with_type else line
