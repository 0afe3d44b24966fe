"""A benchmark script loaded as a module, for tests of its logic (benchmarks/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from paths import ROOT


def load_benchmark(relative: str) -> ModuleType:
    """`benchmarks/<relative>.py` as a module; its folder goes on sys.path for its own imports."""
    path = ROOT / "benchmarks" / f"{relative}.py"
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
