"""Rows grouped on their keys' codes in order of appearance, as pandas' `groupby(sort=False,
observed=True)` groups them, without its cost on many distinct names: pandas recodes a
categorical of 666 k names (or hashes every row's text) for each grouping, where codes are
factorized once here and the group's key values taken back from one row of each group."""

from __future__ import annotations

import numpy as np
import pandas as pd


def group_codes(rows: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """Group number of each row, groups numbered in order of appearance; −1 where a key is
    missing (as `groupby` leaves those rows out)."""
    group = np.zeros(len(rows), dtype=np.int64)
    for key in keys:
        codes, uniques = pd.factorize(rows[key], sort=False)
        ok = (group >= 0) & (codes >= 0)
        group = np.where(ok, group * len(uniques) + codes, -1)  # < rows²: no overflow
        group[ok] = pd.factorize(group[ok], sort=False)[0]  # renumbered for the next key
    return group


def first_rows(group: np.ndarray) -> np.ndarray:
    """Row position of each group's first row, by group number."""
    ok = np.flatnonzero(group >= 0)
    _, first = np.unique(group[ok], return_index=True)
    return ok[first]


def most_common_rows(group: np.ndarray, values: pd.Series, n_groups: int) -> np.ndarray:
    """Per group, the position of a row holding its most frequent value of `values` (ties:
    the value that appeared first), −1 where the group has none; as `groupby(keys +
    [column]).size()` sorted by count, stable, then the first row per key."""
    vcode, vuniq = pd.factorize(values, sort=False)
    ok = np.flatnonzero((group >= 0) & (vcode >= 0))
    best = np.full(n_groups, -1, dtype=np.int64)
    if len(ok) == 0:
        return best
    pair = group[ok] * len(vuniq) + vcode[ok]
    pcode, puniq = pd.factorize(pair, sort=False)
    counts = np.bincount(pcode)
    _, first_of_pair = np.unique(pcode, return_index=True)
    order = np.argsort(-counts, kind="stable")  # pairs by count, ties in order of appearance
    pair_group = puniq[order] // len(vuniq)
    _, top = np.unique(pair_group, return_index=True)  # each group's first pair in that order
    best[pair_group[top]] = ok[first_of_pair[order[top]]]
    return best


def values_at(column: pd.Series, rows: np.ndarray) -> pd.Series:
    """`column`'s values at row positions `rows` (its dtype kept), missing where −1."""
    taken = column.iloc[np.where(rows >= 0, rows, 0)].reset_index(drop=True)
    return taken.where(pd.Series(rows >= 0)) if len(rows) and (rows < 0).any() else taken
