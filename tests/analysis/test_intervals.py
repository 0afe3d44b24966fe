"""Exact arithmetic of the interval helpers every busy/idle figure rests on."""

import numpy as np

from jupyter_gpuprof.analysis.intervals import Coverage, complement, union


def test_union_merges_overlapping_and_touching_intervals():
    s, e = union(np.array([5.0, 0.0, 2.0, 10.0]), np.array([7.0, 3.0, 4.0, 11.0]))
    assert s.tolist() == [0.0, 5.0, 10.0]
    assert e.tolist() == [4.0, 7.0, 11.0]


def test_union_keeps_a_long_interval_that_swallows_later_ones():
    s, e = union(np.array([0.0, 1.0, 2.0]), np.array([10.0, 2.0, 3.0]))
    assert (s.tolist(), e.tolist()) == ([0.0], [10.0])


def test_complement_inside_window():
    gs, ge = complement(np.array([1.0, 5.0]), np.array([2.0, 8.0]), 0.0, 10.0)
    assert list(zip(gs, ge, strict=True)) == [(0.0, 1.0), (2.0, 5.0), (8.0, 10.0)]


def test_coverage_overlap_and_contains():
    c = Coverage.of(np.array([0.0, 10.0]), np.array([4.0, 20.0]))
    assert c.total == 14.0
    assert c.overlap(np.array([2.0, 3.0, -5.0]), np.array([12.0, 30.0, 0.0])).tolist() == [
        4.0, 11.0, 0.0]
    assert c.contains(np.array([3.0, 5.0, 20.0])).tolist() == [True, False, True]


def test_empty_coverage_is_zero():
    c = Coverage.of(np.array([]), np.array([]))
    assert c.overlap(np.array([0.0]), np.array([5.0])).tolist() == [0.0]
    assert not c.contains(np.array([1.0]))[0]
