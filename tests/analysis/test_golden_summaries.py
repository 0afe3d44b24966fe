"""Every figure of every committed trace and run folder's summary is what it was before the
speed work (issue 25): a faster reader, replay or timeline may not change one of them."""

from __future__ import annotations

import pytest
from golden import cases, differences, load_golden, summary_of

GOLDEN = load_golden()


def test_every_case_was_recorded():
    assert sorted(GOLDEN) == cases()


@pytest.mark.parametrize("rel", cases())
def test_summary_is_unchanged(rel, tmp_path):
    found = differences(GOLDEN[rel], summary_of(rel, tmp_path))
    assert not found, f"{len(found)} figures changed, first: " + "; ".join(found[:5])


def test_a_changed_figure_is_caught():
    """The comparison itself: a float past the tolerance, a label, a count, a list's length."""
    old = {"a": 1.0, "b": "launch", "c": [1, 2], "d": 3}
    assert not differences(old, {"a": 1.0 + 1e-12, "b": "launch", "c": [1, 2], "d": 3})
    assert differences(old, {**old, "a": 1.0 + 1e-8})
    assert differences(old, {**old, "b": "host"})
    assert differences(old, {**old, "c": [1, 2, 3]})
    assert differences(old, {**old, "d": 4})
    assert differences(old, {**old, "d": 3.0})
