"""Command lines and dotted names the docs mention, checked against the code without running.

A documented `jupyter gpuprof …`, `%%gpuprofile …` or `%ncu …` line may only use options its
parser has, and a documented `jupyter_gpuprof.a.b` must still import: a rename fails a test
(tests/test_docs_calls.py) rather than a reader.
"""

from __future__ import annotations

import importlib
import shlex
from typing import Any

from jupyter_gpuprof.cli import build_parser
from jupyter_gpuprof.magics import GpuProfMagics
from jupyter_gpuprof.ncu.magic import parser as ncu_parser


def _options(parser: Any) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}  # noqa: SLF001 - argparse


def _subparsers(parser: Any) -> dict[str, Any]:
    for a in parser._actions:  # noqa: SLF001 - argparse keeps them here
        if isinstance(getattr(a, "choices", None), dict):
            return dict(a.choices)
    return {}


def unknown_flags(command: str) -> list[str]:
    """The options of a documented command line (`jupyter gpuprof …`, `%%gpuprofile …`, `%ncu …`)
    that its parser does not have; placeholders and `[…]` brackets are allowed."""
    words = shlex.split(command.replace("[", " ").replace("]", " "))
    if "--" in words:
        words = words[: words.index("--")]
    if words[:2] == ["jupyter", "gpuprof"]:
        subs = _subparsers(build_parser())
        if len(words) < 3:
            return []
        if words[2] not in subs:
            return [words[2]]
        known = _options(subs[words[2]])
    elif words and words[0] in ("%%gpuprofile", "%gpuprofile"):
        known = _options(GpuProfMagics.gpuprofile.parser)
    elif words and words[0] in ("%ncu", "%%ncu"):
        known = _options(ncu_parser())
    else:
        return []
    return [w.split("=")[0] for w in words if w.startswith("-") and w.split("=")[0] not in known]


def missing_name(dotted: str) -> str | None:
    """`jupyter_gpuprof.a.b` that cannot be imported or looked up, else None."""
    parts = dotted.split(".")
    obj: Any = None
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return dotted
            obj = getattr(obj, attr)
        return None
    return dotted
