"""Plain-words reading of Nsight Compute metrics per kernel, tied to what to try next.

Each kernel gets one verdict — memory-bound, compute-bound, tensor cores idle,
occupancy-limited or latency-bound — decided from speed-of-light, occupancy, stall and
Tensor-Core metrics with the thresholds named below, and a roofline point that is right for
Tensor-Core kernels: FLOPs come from the op's shapes where known, else from the tensor-pipe
and FP instruction counters (Nsight's own chart counts FP32/FP64 only, so a bf16 GEMM sits
near 0 % there).
"""

from __future__ import annotations

import math
import re
from typing import TypedDict

import pandas as pd

from ..advice import thresholds as T
from ..advice.findings import Finding

MATMUL_OPS = re.compile(r"^aten::(mm|addmm|bmm|baddbmm|matmul|linear|_scaled_mm|addmv|mv)$")
MATMUL_NAME = re.compile(r"gemm|nvjet|xmma|cutlass|wgmma|matmul|s16816|hmma|sgemm", re.I)
INTERP_COLUMNS = {
    "id": "kernel index in the report",
    "kernel_base": "bare kernel name",
    "verdict": "memory-bound | compute-bound | tensor-cores-idle | occupancy-limited | "
    "latency-bound",
    "why": "the numbers behind the verdict, in words",
    "next_step": "what to try next",
    "flops": "FLOPs of one launch",
    "flops_source": "shapes | counters | ''",
    "intensity": "FLOPs per DRAM byte",
    "achieved_tflops": "TFLOP/s achieved",
    "roof_tflops": "roofline ceiling at this intensity, TFLOP/s",
    "pct_of_roof": "achieved as % of that ceiling",
    "roof_bound": "memory | compute | ''",
}
STALL_ADVICE = {
    "long_scoreboard": "warps wait on global/local memory loads: improve coalescing and reuse, "
    "or fuse so intermediates stay on chip",
    "short_scoreboard": "warps wait on shared memory or special-function results",
    "barrier": "warps wait at __syncthreads: uneven work inside blocks",
    "mio_throttle": "the shared-memory/special-instruction queue is full",
    "lg_throttle": "too many outstanding global memory instructions: use wider (vectorised) loads",
    "math_pipe_throttle": "a math pipe is saturated",
    "wait": "fixed-latency dependencies between instructions (little parallel work per warp)",
    "not_selected": "enough warps are ready; the scheduler is simply busy",
    "no_instruction": "instruction cache misses or very short kernels",
    "branch_resolving": "divergent branches",
    "dispatch_stall": "dispatch conflicts",
    "drain": "waiting for memory stores at exit",
    "imc_miss": "constant cache misses",
    "membar": "memory barriers",
    "tex_throttle": "texture unit saturated",
    "gmma": "waiting on warpgroup MMA (Tensor-Core) results",
}


def _prod(dims: list[int]) -> float:
    """Product of dimensions, as float."""
    out = 1.0
    for d in dims:
        out *= d
    return out


def shape_flops(op: str, dims: list[list[int]]) -> float:
    """FLOPs of one call of a matmul-like op from its recorded input shapes (NaN if unknown)."""
    try:
        if op in ("aten::mm", "aten::matmul") and len(dims[0]) == 2 and len(dims[1]) == 2:
            return 2.0 * dims[0][0] * dims[0][1] * dims[1][1]
        if op == "aten::addmm":
            return 2.0 * dims[1][0] * dims[1][1] * dims[2][1]
        if op in ("aten::bmm", "aten::baddbmm"):
            a, b = (dims[0], dims[1]) if op == "aten::bmm" else (dims[1], dims[2])
            return 2.0 * a[0] * a[1] * a[2] * b[2]
        if op == "aten::linear":
            return 2.0 * _prod(dims[0][:-1]) * dims[0][-1] * dims[1][0]
        if "scaled_dot_product" in op or "flash_attention" in op or "cudnn_attention" in op:
            q, k = dims[0], dims[1]  # (B, H, L, E) @ (B, H, S, E)
            fwd = 4.0 * _prod(q[:-2]) * q[-2] * k[-2] * q[-1]
            return fwd * (2.5 if "backward" in op else 1.0)
    except (IndexError, TypeError):
        return math.nan
    return math.nan


class RooflinePoint(TypedDict):
    """Where one kernel sits on the tensor-aware roofline (NaN where unknown)."""

    flops: float
    flops_source: str  # shapes | counters | ""
    intensity: float  # FLOPs per DRAM byte
    achieved_tflops: float
    roof_tflops: float
    pct_of_roof: float
    roof_bound: str  # memory | compute | ""


class KernelReading(RooflinePoint):
    """One kernel's verdict, why, what to try next, and its roofline point."""

    id: int
    kernel_base: str
    verdict: str
    why: str
    next_step: str


def roofline(row: pd.Series, op_flops: float = math.nan) -> RooflinePoint:
    """Tensor-aware roofline point of one kernel (FLOPs from shapes when given, else counters)."""
    counted = float(row.get("flops_tensor", 0) or 0) + float(row.get("flops_simt", 0) or 0)
    flops, src = (
        (op_flops, "shapes")
        if op_flops == op_flops and op_flops > 0
        else ((counted, "counters") if counted > 0 else (math.nan, ""))
    )
    dur = float(row.get("duration_us", math.nan)) * 1e-6
    nbytes = float(row.get("dram_bytes", math.nan))
    tensor = float(row.get("flops_tensor", 0) or 0) > 0 or src == "shapes" and _is_tc(row)
    peak = float(row.get("peak_tensor_flops", math.nan)) if tensor else math.nan
    if not peak == peak:
        peak = float(row.get("peak_fp32_flops", math.nan))
    bw = float(row.get("peak_dram_bps", math.nan))
    out: RooflinePoint = {
        "flops": flops,
        "flops_source": src,
        "intensity": math.nan,
        "achieved_tflops": math.nan,
        "roof_tflops": math.nan,
        "pct_of_roof": math.nan,
        "roof_bound": "",
    }
    if not (flops > 0 and dur > 0):
        return out
    out["achieved_tflops"] = flops / dur / 1e12
    if nbytes > 0 and bw > 0 and peak > 0:
        ai = flops / nbytes
        roof = min(peak, ai * bw)
        out.update(
            {
                "intensity": ai,
                "roof_tflops": roof / 1e12,
                "pct_of_roof": 100.0 * flops / dur / roof,
                "roof_bound": "memory" if ai * bw < peak else "compute",
            }
        )
    return out


def _is_tc(row: pd.Series) -> bool:
    """Whether the Tensor-Core pipe did real work in this kernel."""
    return float(row.get("tensor_pct", 0) or 0) >= T.NCU_TENSOR_IDLE_PCT


def _is_matmul(row: pd.Series, op: str) -> bool:
    """Whether the kernel is a matmul, by its op or its kernel name."""
    return bool(MATMUL_OPS.match(op)) or bool(MATMUL_NAME.search(str(row.get("kernel", ""))))


def interpret_kernel(row: pd.Series, op: str = "", op_flops: float = math.nan
                     ) -> KernelReading:
    """One kernel's verdict, the numbers behind it and what to try next."""
    sm, mem = float(row["sm_pct"]), float(row["mem_pct"])
    tpct = float(row.get("tensor_pct", math.nan))
    occ_t, occ_a = float(row["occ_theoretical_pct"]), float(row["occ_achieved_pct"])
    waves, stall = float(row.get("waves_per_sm", math.nan)), str(row.get("stall_top", ""))
    sol = f"SM {sm:.0f} %, memory {mem:.0f} % of peak (DRAM {float(row['dram_pct']):.0f} %)"
    if _is_matmul(row, op) and not (tpct >= T.NCU_TENSOR_IDLE_PCT):
        verdict = "tensor-cores-idle"
        why = f"a matmul with the Tensor-Core pipe at {tpct:.1f} % ({sol})"
        step = (
            "run it in bf16 (torch.autocast('cuda', dtype=torch.bfloat16)) or allow TF32 "
            "(torch.set_float32_matmul_precision('high')) so cuBLAS picks Tensor-Core kernels"
        )
    elif mem >= T.NCU_BOUND_PCT and mem >= sm:
        verdict = "memory-bound"
        why = f"memory is the busiest unit: {sol}"
        step = (
            "move fewer bytes: fuse it with its neighbours (torch.compile), keep activations "
            "in bf16, avoid extra copies and .contiguous(); more bandwidth is not available"
        )
    elif sm >= T.NCU_BOUND_PCT or tpct >= T.NCU_TENSOR_BUSY_PCT:
        verdict = "compute-bound"
        why = f"compute is the busiest unit: {sol}, Tensor-Core pipe {tpct:.0f} %"
        step = (
            "near what this kernel can do: reduce the work (fewer FLOPs, smaller shapes) "
            "or use lower precision (bf16 → fp8 where the model allows)"
        )
    elif occ_t < T.NCU_LOW_OCCUPANCY_PCT and not (waves < 1):
        limiter = str(row.get("occ_limiter", "")) or "launch configuration"
        verdict = "occupancy-limited"
        why = (
            f"theoretical occupancy {occ_t:.0f} % (limited by {limiter}; "
            f"{row['registers_per_thread']:.0f} registers/thread), achieved {occ_a:.0f} %; {sol}"
        )
        step = (
            "for your own kernels: fewer registers (__launch_bounds__, smaller tiles) or less "
            "shared memory per block; for library kernels, change the shapes or dtype"
        )
    else:
        verdict = "latency-bound"
        if waves < 1:
            why = (
                f"the grid ({row['grid_size']:.0f} blocks) fills only {100 * waves:.1f} % of "
                f"one wave on {row['sm_count']:.0f} SMs; {sol}"
            )
            step = (
                "give it more parallel work: bigger batch or fused ops; for many tiny "
                "launches use CUDA graphs (torch.compile mode='reduce-overhead')"
            )
        else:
            detail = STALL_ADVICE.get(stall, "")
            gap = occ_t - occ_a
            why = f"neither unit is busy ({sol}); top stall: {stall or 'n/a'}" + (
                f" — {detail}" if detail else ""
            )
            step = (
                "hide latency with more independent work per thread (vectorised loads, "
                "fusion)"
                + (
                    f"; achieved occupancy is {gap:.0f} points under theoretical, "
                    "so check the tail/imbalance"
                    if gap >= T.NCU_OCCUPANCY_GAP_PTS
                    else ""
                )
            )
    return {
        "id": int(row["id"]),
        "kernel_base": str(row["kernel_base"]),
        "verdict": verdict,
        "why": why,
        "next_step": step,
        **roofline(row, op_flops),
    }


def interpret(
    kernels: pd.DataFrame, ops: dict[int, tuple[str, float]] | None = None
) -> pd.DataFrame:
    """Verdict per kernel (`INTERP_COLUMNS`); `ops`: kernel id -> (op name, FLOPs from shapes)."""
    ops = ops or {}
    rows = [
        interpret_kernel(r, *ops.get(int(r["id"]), ("", math.nan))) for _, r in kernels.iterrows()
    ]
    return pd.DataFrame(rows, columns=list(INTERP_COLUMNS))


def ncu_findings(
    kernels: pd.DataFrame, interp: pd.DataFrame, share_pct: dict[int, float] | None = None
) -> list[Finding]:
    """Findings for the run's next steps: one per kernel whose verdict leaves room to gain."""
    out = []
    share_pct = share_pct or {}
    for (_, k), (_, i) in zip(kernels.iterrows(), interp.iterrows(), strict=False):
        if i["verdict"] == "compute-bound":
            continue
        share = share_pct.get(int(k["id"]), math.nan)
        gain = (
            share * (0.5 if i["verdict"] == "tensor-cores-idle" else 0.3) if share == share else 0.0
        )
        out.append(
            Finding(
                id=f"ncu-{i['verdict']}-{int(k['id'])}",
                category="ncu",
                title=f"{i['kernel_base'][:60]}: {i['verdict'].replace('-', ' ')}",
                evidence=f"Nsight Compute: {i['why']}",
                fix=str(i["next_step"]),
                cost_ms=0.0,
                expected_gain_pct=float(gain),
                data={"kernel": str(k["kernel"]), "source": "ncu"},
            )
        )
    return sorted(out, key=lambda f: -f.expected_gain_pct)
