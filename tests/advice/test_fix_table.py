"""The fix table is the one list of `--try` fixes: every row has both halves of its applier."""

from __future__ import annotations

import inspect

import pytest

from jupyter_gpuprof.advice.findings import CATEGORIES
from jupyter_gpuprof.advice.fix_table import CATEGORY_OF, FIX_NAMES, FIXES, TRIES_OF, fixes_help
from jupyter_gpuprof.tries import appliers
from jupyter_gpuprof.tries.appliers.base import StartupFix
from jupyter_gpuprof.tries.notebook import parse_fixes


@pytest.mark.parametrize("fix", FIXES, ids=lambda f: f.name)
def test_every_fix_has_a_category_help_and_both_appliers(fix):
    # None: a memory fix (checkpoint), which the memory over the step offers, no finding
    assert (fix.category in CATEGORIES or fix.category is None) and fix.help
    module = appliers.load(fix.name)
    assert inspect.signature(module.notebook).parameters.keys() == {"ns", "step", "cuda"}
    assert issubclass(module.Startup, StartupFix) and module.Startup.name == fix.name


def test_the_names_every_surface_lists_come_from_the_table():
    assert FIX_NAMES == tuple(f.name for f in FIXES) and fixes_help() == ",".join(FIX_NAMES)
    assert {f: c for c, fs in TRIES_OF.items() for f in fs} == CATEGORY_OF
    assert set(FIX_NAMES) - set(CATEGORY_OF) == {"checkpoint"}  # measures no verdict finding
    from jupyter_gpuprof.magics import GpuProfMagics
    from jupyter_gpuprof.tries.script import TRY_HELP

    magic_help = next(a.help for a in GpuProfMagics.gpuprofile.parser._actions
                      if a.dest == "try_fixes")
    assert fixes_help() in magic_help and fixes_help() in TRY_HELP


def test_a_name_outside_the_table_is_refused_with_the_table_s_names():
    with pytest.raises(ValueError,
                       match="choose from tf32, amp, compile, graphs, loader, checkpoint"):
        appliers.load("fp8")
    with pytest.raises(ValueError, match="unknown fix fp8"):
        parse_fixes("fp8", [])
