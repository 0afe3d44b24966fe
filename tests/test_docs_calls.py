"""The README's and docs' command lines and names of ours still exist (a rename fails here)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from documented_calls import missing_name, unknown_flags
from paths import ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SPAN = re.compile(r"`([^`\n]+)`")
COMMAND = re.compile(r"^(jupyter gpuprof \w|%%?gpuprofile\b|%%?ncu\b)")
NAME = re.compile(r"\bjupyter_gpuprof(?:\.[A-Za-z_]\w*)+")


def _spans(path: Path) -> list[str]:
    text = path.read_text()
    blocks = re.findall(r"```(?:bash|python)?\n(.*?)```", text, flags=re.S)
    lines = [ln.strip() for b in blocks for ln in b.splitlines()]
    return SPAN.findall(text) + lines


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_documented_commands_use_only_options_that_exist(path):
    commands = [s for s in _spans(path) if COMMAND.match(s) and "\\|" not in s]
    bad = {c: unknown_flags(c) for c in commands if unknown_flags(c)}
    assert bad == {}


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_documented_names_of_ours_exist(path):
    names = {m.group(0) for s in _spans(path) for m in NAME.finditer(s)}
    assert sorted(n for n in names if missing_name(n)) == []


def test_the_readme_is_read():
    """The checks above see the README's commands (an empty match would pass anything)."""
    spans = _spans(ROOT / "README.md")
    assert sum(bool(COMMAND.match(s)) for s in spans) >= 5
    assert unknown_flags("jupyter gpuprof run --tryy amp -- python t.py") == ["--tryy"]
    assert unknown_flags("%%gpuprofile --stepz 3") == ["--stepz"]
    assert missing_name("jupyter_gpuprof.report.analyse_path") is not None
