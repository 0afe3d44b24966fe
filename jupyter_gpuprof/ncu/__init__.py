"""Nsight Compute, one part: the single entry point the magic, the CLI and the rank launcher use.

Inside, data flows one way, and a module imports only those before it:
options/errors -> driver -> targets/replay (+ the standalone replay_script) -> session (runs
ncu, stores files through `store.ncu_files`) -> readers/rep_reader -> metrics -> rules ->
panel -> results (the `NcuResults` facade and the `profile_*` workflows) -> magic (%ncu).
Names are imported on first use, so `%load_ext` and the CLI stay quick and pandas loads only
when results are read.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .driver import find_ncu, ncu_version
    from .errors import NcuError, NcuReportError, app_returncode
    from .magic import load_ipython_extension
    from .metrics import NCU_COLUMNS, STALL_COLUMNS, attribute_targets, read_raw_csv, read_report
    from .options import NcuOptions
    from .readers import RULE_COLUMNS, read_details_rules
    from .rep_reader import import_ncu_report
    from .results import (
        NcuResults,
        attach_ncu,
        build_results,
        load_ncu,
        profile_command,
        profile_replay,
        profile_source,
    )
    from .rules import INTERP_COLUMNS

#: public name -> the module (in this package) that defines it
PUBLIC = {
    "NcuOptions": "options",
    "NcuError": "errors",
    "NcuReportError": "errors",
    "app_returncode": "errors",
    "find_ncu": "driver",
    "ncu_version": "driver",
    "read_details_rules": "readers",
    "RULE_COLUMNS": "readers",
    "import_ncu_report": "rep_reader",
    "NCU_COLUMNS": "metrics",
    "STALL_COLUMNS": "metrics",
    "attribute_targets": "metrics",
    "read_raw_csv": "metrics",
    "read_report": "metrics",
    "INTERP_COLUMNS": "rules",
    "NcuResults": "results",
    "attach_ncu": "results",
    "build_results": "results",
    "load_ncu": "results",
    "profile_command": "results",
    "profile_replay": "results",
    "profile_source": "results",
    "load_ipython_extension": "magic",
}
__all__ = [
    "INTERP_COLUMNS",
    "NCU_COLUMNS",
    "NcuError",
    "NcuOptions",
    "NcuReportError",
    "NcuResults",
    "RULE_COLUMNS",
    "STALL_COLUMNS",
    "app_returncode",
    "attach_ncu",
    "attribute_targets",
    "build_results",
    "find_ncu",
    "import_ncu_report",
    "load_ipython_extension",
    "load_ncu",
    "ncu_version",
    "profile_command",
    "profile_replay",
    "profile_source",
    "read_details_rules",
    "read_raw_csv",
    "read_report",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in PUBLIC:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{PUBLIC[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Public names for tab completion."""
    return __all__
