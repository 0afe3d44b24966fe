"""A finding's tries as the text report writes them, held to the widget's sentence
(src/__tests__/whatif.spec.ts): measured gains first, then the tries that crashed, with why."""

from __future__ import annotations

from jupyter_gpuprof.views.whatif_text import measured_for

FINDING = {"try_fixes": ["compile", "graphs"]}
CRASHED = {"fix": "graphs", "error": "RecursionError: maximum recursion depth"}


def test_a_crashed_try_is_named_with_its_cause():
    assert measured_for(FINDING, [CRASHED]) == (
        "Tried: --try graphs crashed: RecursionError: maximum recursion depth")


def test_measured_gains_come_first():
    ran = {"fix": "compile", "measured_gain_pct": 37.0, "change": None}
    assert measured_for(FINDING, [CRASHED, ran]) == (
        "Measured: --try compile +37.0% (not judged); "
        "--try graphs crashed: RecursionError: maximum recursion depth")


def test_a_finding_whose_fixes_were_not_tried_says_nothing():
    assert measured_for({"try_fixes": ["amp"]}, [CRASHED]) is None
