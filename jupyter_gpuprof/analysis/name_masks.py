"""Row masks and values from a rule on event names, paid once per distinct name the rows use.

Every slice of the event table shares the whole trace's name categories, so testing every
category would cost a pass over all distinct names of the trace (666 k with `with_stack` and
varied shapes) for each small slice; only the names present in the slice are tested.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd


def used_names(names: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The category codes a categorical name column uses, and their names (object strings)."""
    cat = names.cat
    codes = cat.codes.to_numpy()
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=object)
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(cat.categories)))
    return used, cat.categories.to_numpy(dtype=object)[used]


def per_name(df: pd.DataFrame, rule: Callable[[np.ndarray], Sequence[Any] | np.ndarray],
             missing: Any, dtype: Any = object) -> np.ndarray:
    """`rule` (names -> one value each) for every row's name, evaluated once per distinct
    name the rows use; rows without a name get `missing`."""
    cat = df["name"].cat
    codes = cat.codes.to_numpy()
    if len(codes) == 0:
        return np.zeros(0, dtype=dtype)
    used, names = used_names(df["name"])
    values = np.full(len(cat.categories) + 1, missing, dtype=dtype)  # the last: a missing name
    values[used] = rule(names)
    return values[codes]


def names_where(df: pd.DataFrame, predicate: Callable[[str], bool],
                needle: str | Sequence[str] | None = None) -> np.ndarray:
    """Boolean mask of rows whose name satisfies `predicate`, evaluated once per distinct name;
    with `needle`, a text that every name satisfying it contains (its prefix, a word of it),
    or several texts one of which each such name contains, only the names containing one are
    tested (found in one scan of the names per text)."""
    def rule(names: np.ndarray) -> np.ndarray:
        out = np.zeros(len(names), dtype=bool)
        todo = np.arange(len(names)) if needle is None else containing(names, needle)
        out[todo] = np.fromiter((bool(predicate(n)) for n in names[todo]), dtype=bool,
                                count=len(todo))
        return out
    return per_name(df, rule, False, bool)


def names_matching(df: pd.DataFrame, pattern: re.Pattern[str]) -> np.ndarray:
    """Boolean mask of rows whose name `pattern` is found in (`pattern.search`), for a pattern
    without anchors or look-arounds (see `matching`)."""
    def rule(names: np.ndarray) -> np.ndarray:
        out = np.zeros(len(names), dtype=bool)
        out[matching(names, pattern)] = True
        return out
    return per_name(df, rule, False, bool)


def names_in(df: pd.DataFrame, values: frozenset[str]) -> np.ndarray:
    """Boolean mask of rows whose name is one of `values` (hashed, not compared per name)."""
    return per_name(df, lambda names: pd.Index(names, dtype=object).isin(values), False, bool)


#: the most characters of names joined at a time: each search holds one run of names joined,
#: a bounded copy (all of them would be a copy of every name at the analysis' peak)
CHUNK_CHARS = 1 << 19


def name_chunks(names: np.ndarray) -> Iterator[tuple[int, str, np.ndarray]]:
    """Runs of the names joined by newlines, at most `CHUNK_CHARS` long (or one name): the
    position of the run's first name, its text, and where each of its names ends in it (one
    past its separator). TypeError where a name is not text."""
    ends = np.cumsum(np.fromiter(map(len, names), dtype=np.int64, count=len(names)) + 1)
    start = 0
    while start < len(names):
        base = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, base + CHUNK_CHARS, side="right")), start + 1)
        yield start, "\n".join(names[start:stop]), ends[start:stop] - base
        start = stop


def containing(names: np.ndarray, needle: str | Sequence[str]) -> np.ndarray:
    """Positions of the names that contain `needle` (or one of several), in order: the names
    are joined (`name_chunks`) and each needle searched, each hit's name taken and the search
    resumed at the next name, so the cost is a join and a pass of `str.find` per needle (a
    per-name test cost 0.3 µs a name on 666 k names). A hit that spans two names (a needle or
    a name with the separator) is checked on its own name."""
    needles = (needle,) if isinstance(needle, str) else tuple(needle)
    hits: list[int] = []
    try:
        for start, joined, ends in name_chunks(names):
            for one in needles:
                pos = joined.find(one)
                while pos >= 0:
                    i = int(np.searchsorted(ends, pos, side="right"))
                    if one in names[start + i]:
                        hits.append(start + i)
                    if i + 1 >= len(ends):
                        break
                    pos = joined.find(one, int(ends[i]))
    except TypeError:  # a name that is not text
        return np.flatnonzero([isinstance(n, str) and any(s in n for s in needles)
                               for n in names])
    return hits_in_order(len(names), np.array(hits, dtype=np.int64))


def hits_in_order(n: int, *positions: np.ndarray) -> np.ndarray:
    """The positions (below `n`) of any of the arrays, each once, in order: a mask, not
    `np.unique` (its hashing took 0.4 s on 333 k distinct positions)."""
    mask = np.zeros(n, dtype=bool)
    for at in positions:
        mask[at] = True
    return np.flatnonzero(mask)


def matching(names: np.ndarray, pattern: re.Pattern[str]) -> np.ndarray:
    """Positions of the names `pattern.search` finds a match in, in one scan of the names
    joined (`name_chunks`; a search per name cost 0.3 µs a name on 333 k names). For a
    pattern without anchors or look-arounds: a match within a name is then a match at the
    same place in the joined text, so the leftmost match from a name's start is in the first
    name from there that has one, or spans a separator; each hit's own name is searched on its
    own (a match across two names is not one), and the scan resumes at the next name."""
    hits: list[int] = []
    try:
        for start, joined, ends in name_chunks(names):
            found = pattern.search(joined)
            while found is not None:
                i = int(np.searchsorted(ends, found.start(), side="right"))
                if i >= len(ends):
                    break
                if pattern.search(names[start + i]) is not None:
                    hits.append(start + i)
                if i + 1 >= len(ends):
                    break
                found = pattern.search(joined, int(ends[i]))
    except TypeError:  # a name that is not text
        return np.flatnonzero([isinstance(n, str) and pattern.search(n) is not None
                               for n in names])
    return np.array(hits, dtype=np.int64)
