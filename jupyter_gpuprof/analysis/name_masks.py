"""Row masks from a test on event names, paid once per distinct name that the rows use.

Every slice of the event table shares the whole trace's name categories, so testing every
category would cost a pass over all distinct names of the trace (666 k with `with_stack` and
varied shapes) for each small slice; only the names present in the slice are tested.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd


def names_where(df: pd.DataFrame, predicate: Callable[[str], bool]) -> np.ndarray:
    """Boolean mask of rows whose name satisfies `predicate`, evaluated once per distinct name."""
    cat = df["name"].cat
    codes = cat.codes.to_numpy()
    if len(codes) == 0:
        return np.zeros(0, dtype=bool)
    used = np.flatnonzero(np.bincount(codes[codes >= 0], minlength=len(cat.categories)))
    names = cat.categories.to_numpy()[used]
    flags = np.zeros(len(cat.categories) + 1, dtype=bool)  # the last slot: a missing name
    flags[used] = np.fromiter((bool(predicate(n)) for n in names), dtype=bool, count=len(used))
    return flags[codes]
