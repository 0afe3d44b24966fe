"""Row masks and values from a rule on event names, paid once per distinct name the rows use.

Every slice of the event table shares the whole trace's name categories, so testing every
category would cost a pass over all distinct names of the trace (666 k with `with_stack` and
varied shapes) for each small slice; only the names present in the slice are tested.
"""

from __future__ import annotations

from collections.abc import Callable
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


def per_name(df: pd.DataFrame, rule: Callable[[np.ndarray], np.ndarray], missing: Any,
             dtype: Any = object) -> np.ndarray:
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


def names_where(df: pd.DataFrame, predicate: Callable[[str], bool]) -> np.ndarray:
    """Boolean mask of rows whose name satisfies `predicate`, evaluated once per distinct name."""
    return per_name(df, lambda names: np.fromiter((bool(predicate(n)) for n in names),
                                                  dtype=bool, count=len(names)), False, bool)
