"""Which kernels each operator launched, and each operator's input shapes with their counts.

Kineto stamps a GPU activity with the `External id` of the innermost op that launched it (the
runtime call between them shares its `correlation`), which is also how `ops.op_rows` gives an
op its own device time: the links here add up to the op table's `cuda_self_us`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .kernels import codes_in_order, short_kernel_names
from .name_masks import hits_in_order

OP_KERNEL_COLUMNS = {
    "op": "the launching operator (the innermost op, as in the op table)",
    "kernel": "full kernel name", "short_name": "the kernel's own name (`short_kernel_name`)",
    "calls": "launches from that op in the window", "total_us": "their summed duration",
}
OP_SHAPE_COLUMNS = {
    "op": "operator", "input_dims": "one input-shape list as the trace writes it",
    "calls": "calls with those shapes", "cuda_self_us": "their own GPU time",
}


def op_kernels(calls: pd.DataFrame, kernels: pd.DataFrame) -> pd.DataFrame:
    """Kernels per launching op (`OP_KERNEL_COLUMNS`), longest first: `calls` are op calls
    (`ops.op_rows`, autograd wrappers included, as they launch nothing), `kernels` GPU rows."""
    if calls.empty or kernels.empty:
        return pd.DataFrame(columns=list(OP_KERNEL_COLUMNS))
    # grouped on the names' codes (hashing 2 M name texts per pair took most of it), each
    # kernel's short name taken once
    ops = calls[calls["external_id"] >= 0]
    op, op_text = codes_in_order(ops["name"])
    op_of = pd.Series(op, index=ops["external_id"].to_numpy())
    op_of = op_of[~op_of.index.duplicated()]
    linked = kernels[kernels["external_id"] >= 0]
    kernel, kernel_text = codes_in_order(linked["name"])
    pairs = pd.DataFrame({"op": linked["external_id"].map(op_of).to_numpy(dtype=float),
                          "kernel": kernel, "dur_us": linked["dur_us"].to_numpy(dtype=float)})
    # as dropping missing values did: no op, an unnamed op or kernel, no duration
    pairs = pairs[(pairs["op"].fillna(-1) >= 0) & (pairs["kernel"] >= 0)
                  & pairs["dur_us"].notna()]
    if pairs.empty:
        return pd.DataFrame(columns=list(OP_KERNEL_COLUMNS))
    pair = pairs["op"].to_numpy(dtype=np.int64) * len(kernel_text) + pairs["kernel"].to_numpy()
    out = (pairs.assign(pair=pair).groupby("pair", sort=False)
           .agg(op=("op", "first"), kernel=("kernel", "first"), calls=("dur_us", "size"),
                total_us=("dur_us", "sum")))
    op_code = out["op"].to_numpy(dtype=np.int64)
    kernel_code = out["kernel"].to_numpy(dtype=np.int64)
    used = hits_in_order(len(kernel_text), kernel_code)  # np.unique hashes: 0.4 s on 333 k
    short_of = np.empty(len(kernel_text), dtype=object)
    short_of[used] = short_kernel_names(kernel_text[used])
    out = pd.DataFrame({"op": op_text[op_code], "kernel": kernel_text[kernel_code],
                        "short_name": short_of[kernel_code], "calls": out["calls"].to_numpy(),
                        "total_us": out["total_us"].to_numpy()})
    return _by_text_then(out, text_rank(op_text)[op_code], "total_us", ascending=False)


def _by_text_then(table: pd.DataFrame, rank: np.ndarray, *then: str,
                  ascending: bool) -> pd.DataFrame:
    """`table` sorted by the rank of its op text (`text_rank`), then by `then`."""
    keyed = table.assign(_rank=rank)
    return (keyed.sort_values(["_rank", *then], ascending=[True] + [ascending] * len(then))
            .drop(columns="_rank").reset_index(drop=True))


def text_rank(texts: np.ndarray) -> np.ndarray:
    """Each text's rank in sorted order, equal texts ranked equal: the distinct op names are
    sorted once, not every row's (Python's sort of 333 k names takes half numpy's)."""
    listed = list(texts)
    order = np.array(sorted(range(len(listed)), key=listed.__getitem__), dtype=np.int64)
    ordered = texts[order]
    rank = np.empty(len(texts), dtype=np.int64)
    rank[order] = np.cumsum(np.r_[False, ordered[1:] != ordered[:-1]]) if len(texts) else []
    return rank


def op_shapes(calls: pd.DataFrame) -> pd.DataFrame:
    """Every op's input shapes with their call counts (`OP_SHAPE_COLUMNS`), most calls first;
    autograd wrappers are left out as in the op table."""
    if "wrapper" in calls:  # only the columns read here are copied
        calls = calls[["name", "input_dims", "cuda_self_us"]][~calls["wrapper"].to_numpy(
            dtype=bool)]
    if calls.empty:
        return pd.DataFrame(columns=list(OP_SHAPE_COLUMNS))
    # grouped on codes in order of appearance (hashing every call's two texts took most of it)
    op, op_text = codes_in_order(calls["name"])
    dims, dims_text = codes_in_order(calls["input_dims"])
    rows = pd.DataFrame({"op": op, "input_dims": dims,
                         "cuda_self_us": calls["cuda_self_us"].to_numpy(dtype=float)})
    out = (rows.groupby(["op", "input_dims"], sort=False)["cuda_self_us"]
           .agg(calls="size", cuda_self_us="sum").reset_index())
    op_code = out["op"].to_numpy()
    out["op"] = op_text[op_code]
    out["input_dims"] = dims_text[out["input_dims"].to_numpy()]
    return _by_text_then(out[list(OP_SHAPE_COLUMNS)], text_rank(op_text)[op_code], "calls",
                         "cuda_self_us", ascending=False)
