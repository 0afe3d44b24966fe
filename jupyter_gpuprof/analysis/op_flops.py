"""FLOPs of the GEMMs and convolutions a trace ran, from their ops' recorded input shapes: what
the precision fix re-times at the Tensor-Core rate."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .trace import Trace

#: ops whose FLOPs follow from their input shapes (2·M·N·K per product)
GEMM_OPS = frozenset({"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
                      "aten::linear", "aten::_addmm_activation"})
CONV_OPS = frozenset({"aten::cudnn_convolution", "aten::convolution", "aten::_convolution",
                      "aten::convolution_backward", "aten::conv2d", "aten::conv1d"})


def _dims_flops(op: str, dims_text: str) -> float:
    """FLOPs of one GEMM/conv call from its recorded input shapes (0 when not derivable)."""
    try:
        dims = json.loads(dims_text) if dims_text else []
    except ValueError:
        return 0.0
    shapes = [d for d in dims if isinstance(d, list) and d and all(isinstance(x, int) for x in d)]
    mats = [s for s in shapes if len(s) >= 2]
    if op in GEMM_OPS and len(mats) >= 2:
        a, b = mats[-2], mats[-1]
        if op == "aten::linear":  # weight is [out, in]
            return float(2.0 * float(np.prod(a[:-1])) * a[-1] * b[0])
        batch = float(np.prod(a[:-2])) if len(a) > 2 else 1.0
        return float(2.0 * batch * a[-2] * a[-1] * b[-1])
    if op in CONV_OPS and len(mats) >= 2 and len(mats[0]) >= 3 and len(mats[1]) >= 3:
        x, w = mats[0], mats[1]
        if op == "aten::convolution_backward":  # grad_out, input, weight: two products
            x, w = mats[1], mats[2] if len(mats) > 2 else mats[1]
            return 2.0 * _conv(x, w)
        return _conv(x, w)
    return 0.0


def _conv(x: list[int], w: list[int]) -> float:
    """2·N·O·(C/g·kernel)·spatial, with the output as large as the input (stride 1, same pad)."""
    return 2.0 * x[0] * w[0] * float(np.prod(w[1:])) * float(np.prod(x[2:]))


def op_flops(trace: Trace, ext_ids: np.ndarray) -> pd.Series:
    """FLOPs per External id of the GEMM/conv ops that launched the given kernels."""
    ops = trace.of("cpu_op")
    ops = ops[ops["external_id"].isin(ext_ids)]
    names = ops["name"].astype(str)
    ops = ops[names.isin(GEMM_OPS | CONV_OPS).to_numpy()]
    if ops.empty:
        return pd.Series(dtype=float)
    keys = list(zip(ops["name"].astype(str), ops["input_dims"].astype(str), strict=True))
    cache = {k: _dims_flops(*k) for k in set(keys)}
    out = pd.Series([cache[k] for k in keys], index=ops["external_id"].to_numpy())
    return out[~out.index.duplicated(keep="last")]  # innermost op (recorded last) wins
