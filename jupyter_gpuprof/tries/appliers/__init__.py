"""The code that applies each fix of the table (advice/fix_table.py): one module per fix.

Each module `<name>.py` has both halves of its fix:
- `notebook(ns, step, cuda)`: a context manager that yields the live kernel's step with the fix
  on (what it rebinds in `ns` and the flags it flips are put back by the caller's KernelState);
- `Startup`: a `StartupFix` that switches the fix on for a whole script at start-up
  (`jupyter gpuprof run --try`), says what it changed, and whether it stayed in force.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ...advice.fix_table import BY_NAME, FIX_NAMES


def load(name: str) -> ModuleType:
    """The applier module of fix `name` (ValueError for a name the table does not have)."""
    if name not in BY_NAME:
        raise ValueError(f"unknown fix {name!r}; choose from {', '.join(FIX_NAMES)}")
    return importlib.import_module(f"{__name__}.{name}")
