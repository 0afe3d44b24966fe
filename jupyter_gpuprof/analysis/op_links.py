"""Which kernels each operator launched, and each operator's input shapes with their counts.

Kineto stamps a GPU activity with the `External id` of the innermost op that launched it (the
runtime call between them shares its `correlation`), which is also how `ops.op_rows` gives an
op its own device time: the links here add up to the op table's `cuda_self_us`.
"""

from __future__ import annotations

import pandas as pd

from .kernels import codes_in_order, short_kernel_name

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
    ops = calls[calls["external_id"] >= 0]
    op_of = pd.Series(ops["name"].astype(str).to_numpy(), index=ops["external_id"].to_numpy())
    op_of = op_of[~op_of.index.duplicated()]
    linked = kernels[kernels["external_id"] >= 0]
    pairs = pd.DataFrame({"op": linked["external_id"].map(op_of).to_numpy(),
                          "kernel": linked["name"].astype(str).to_numpy(),
                          "dur_us": linked["dur_us"].to_numpy(dtype=float)}).dropna()
    if pairs.empty:
        return pd.DataFrame(columns=list(OP_KERNEL_COLUMNS))
    out = (pairs.groupby(["op", "kernel"], sort=False)["dur_us"]
           .agg(calls="size", total_us="sum").reset_index())
    out["short_name"] = [short_kernel_name(k) for k in out["kernel"]]
    return out[list(OP_KERNEL_COLUMNS)].sort_values(["op", "total_us"], ascending=[True, False],
                                                     ignore_index=True)


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
    out["op"] = op_text[out["op"].to_numpy()]
    out["input_dims"] = dims_text[out["input_dims"].to_numpy()]
    return out[list(OP_SHAPE_COLUMNS)].sort_values(["op", "calls", "cuda_self_us"],
                                                   ascending=[True, False, False],
                                                   ignore_index=True)
