"""Interval arithmetic on sorted numpy arrays: unions, complements and fast overlap queries.

Every busy/idle and overlap figure in the analyses comes from these few functions, so they
are vectorised: a query of n intervals against a union of m costs O((n + m) log m).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge possibly overlapping intervals into sorted disjoint ones."""
    starts = np.asarray(starts, dtype=np.float64)
    ends = np.asarray(ends, dtype=np.float64)
    if len(starts) == 0:
        return np.empty(0), np.empty(0)
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    run_end = np.maximum.accumulate(e)
    # a new merged interval begins where the start lies beyond every earlier end
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > run_end[:-1]
    idx = np.flatnonzero(new)
    merged_end = np.maximum.reduceat(e, idx)
    return s[idx], merged_end


def complement(s: np.ndarray, e: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Gaps of a disjoint sorted union inside the window [lo, hi]."""
    if hi <= lo:
        return np.empty(0), np.empty(0)
    keep = (e > lo) & (s < hi)
    s, e = np.clip(s[keep], lo, hi), np.clip(e[keep], lo, hi)
    gs = np.concatenate(([lo], e))
    ge = np.concatenate((s, [hi]))
    ok = ge > gs
    return gs[ok], ge[ok]


@dataclass
class Coverage:
    """A disjoint union of intervals that answers 'how much of [a, b] is covered' quickly."""

    starts: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, starts: np.ndarray, ends: np.ndarray) -> Coverage:
        """Coverage of the union of the given intervals."""
        s, e = union(starts, ends)
        return cls(s, e)

    def __post_init__(self) -> None:
        lengths = self.ends - self.starts
        self._before = np.concatenate(([0.0], np.cumsum(lengths)))

    @property
    def total(self) -> float:
        """Covered length."""
        return float(self._before[-1])

    def covered_until(self, t: np.ndarray) -> np.ndarray:
        """Covered length in (-inf, t] for each t."""
        t = np.asarray(t, dtype=np.float64)
        if len(self.starts) == 0:
            return np.zeros_like(t)
        i = np.searchsorted(self.starts, t, side="right") - 1
        ic = np.clip(i, 0, None)
        inside = np.clip(t - self.starts[ic], 0.0, self.ends[ic] - self.starts[ic])
        return np.where(i >= 0, self._before[ic] + inside, 0.0)

    def overlap(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Covered length inside each [a_i, b_i]."""
        covered: np.ndarray = self.covered_until(b) - self.covered_until(a)
        return covered

    def contains(self, t: np.ndarray) -> np.ndarray:
        """Whether each time point lies inside the union."""
        t = np.asarray(t, dtype=np.float64)
        if len(self.starts) == 0:
            return np.zeros(t.shape, dtype=bool)
        i = np.searchsorted(self.starts, t, side="right") - 1
        ic = np.clip(i, 0, None)
        return (i >= 0) & (t <= self.ends[ic])


def intersect(a: Coverage, b: Coverage) -> Coverage:
    """Intersection of two disjoint unions."""
    t = np.concatenate((a.starts, a.ends, b.starts, b.ends))
    d = np.concatenate((np.ones(len(a.starts)), -np.ones(len(a.ends)),
                        np.ones(len(b.starts)), -np.ones(len(b.ends))))
    if len(t) == 0:
        return Coverage(np.empty(0), np.empty(0))
    order = np.lexsort((d, t))  # at equal times, ends (-1) before starts: touching is not overlap
    t, c = t[order], np.cumsum(d[order])
    begin = np.flatnonzero(c == 2)
    s, e = t[begin], t[np.clip(begin + 1, 0, len(t) - 1)]
    keep = e > s
    return Coverage(s[keep], e[keep])


def subtract(a: Coverage, *others: Coverage) -> Coverage:
    """The part of `a` covered by none of `others`."""
    if len(a.starts) == 0:
        return a
    lo, hi = float(a.starts[0]), float(a.ends[-1])
    for b in others:
        gs, ge = complement(b.starts, b.ends, lo, hi)
        a = intersect(a, Coverage(gs, ge))
    return a
