"""Where the tests' files are, named once: a test moved to another folder keeps its data."""

from __future__ import annotations

from pathlib import Path

#: the tests folder (helpers, `data/`, `fakes/`)
TESTS = Path(__file__).resolve().parent
#: the repository root
ROOT = TESTS.parent
