"""Nsight Compute metric records -> one documented DataFrame row per profiled kernel.

Both readers (`readers` for CSV exports, `rep_reader` for `.ncu-rep` through NVIDIA's
`ncu_report`) yield {metric: value} records; `frame` turns either into the columns below
(`NCU_COLUMNS` + `STALL_COLUMNS`), so a report reopens without a GPU either way.
`attribute_targets` ties op-replay kernels to the op that launched them.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from .readers import open_text, raw_records
from .rep_reader import report_records
from .targets import TARGET_RANGE_PREFIX, ReplayTargetJson

NCU_COLUMNS = {
    "id": "kernel index in the report (profiling order)",
    "kernel": "kernel name as Nsight Compute reports it",
    "kernel_base": "bare function name (no namespace, template or parameters), for matching",
    "nvtx": "NVTX ranges the kernel ran in (text; empty if NVTX was off)",
    "grid_size": "blocks launched",
    "block_size": "threads per block",
    "duration_us": "GPU time of one launch (gpu__time_duration.sum)",
    "sm_pct": "compute speed-of-light: SM throughput, % of peak (sm__throughput)",
    "mem_pct": "memory speed-of-light, % of peak (gpu__compute_memory_throughput)",
    "dram_pct": "DRAM throughput, % of peak (gpu__dram_throughput)",
    "dram_bytes": "bytes read + written in DRAM",
    "dram_gbs": "DRAM bandwidth used, GB/s",
    "occ_achieved_pct": "achieved occupancy, % of max warps (sm__warps_active)",
    "occ_theoretical_pct": "theoretical occupancy, % (sm__maximum_warps_per_active_cycle_pct)",
    "occ_limiter": "what caps theoretical occupancy: registers | shared_mem | block_size | "
    "blocks | barriers ('' when not limited)",
    "registers_per_thread": "registers per thread",
    "shared_mem_per_block": "shared memory per block, bytes (static + dynamic + driver)",
    "waves_per_sm": "waves of blocks per SM (< 1: the grid does not fill the GPU)",
    "sm_count": "SMs on the device",
    "l1_hit_pct": "L1/TEX sector hit rate, %",
    "l2_hit_pct": "L2 sector hit rate, %",
    "tensor_pct": "Tensor-Core pipe utilisation, % of peak (max of HMMA cycles and GMMA inst)",
    "issue_active_pct": "share of cycles a scheduler issued an instruction, %",
    "stall_top": "largest warp-stall reason ('selected' excluded)",
    "flops_tensor": "Tensor-Core operations counted (sm__ops_path_tensor_src_*.sum)",
    "flops_simt": "non-tensor FP operations (FMA counted as 2)",
    "peak_tensor_flops": "dense Tensor-Core peak for the dtype seen, FLOP/s ('nan' if none)",
    "peak_fp32_flops": "FP32 FMA peak, FLOP/s",
    "peak_dram_bps": "DRAM peak, bytes/s",
    "device": "GPU name",
}
STALL_REASONS = (
    "long_scoreboard",
    "short_scoreboard",
    "barrier",
    "mio_throttle",
    "lg_throttle",
    "math_pipe_throttle",
    "wait",
    "not_selected",
    "selected",
    "no_instruction",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "imc_miss",
    "membar",
    "misc",
    "sleeping",
    "tex_throttle",
    "gmma",
)
#: warp-stall columns: cycles each issued instruction spent stalled for that reason
STALL_COLUMNS = {
    f"stall_{r}": f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"
    for r in STALL_REASONS
}
M = {  # our column -> ncu metric
    "duration_us": "gpu__time_duration.sum",
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "mem_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_gbs": "dram__bytes.sum.per_second",
    "occ_achieved_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "occ_theoretical_pct": "sm__maximum_warps_per_active_cycle_pct",
    "registers_per_thread": "launch__registers_per_thread",
    "shared_mem_per_block": "launch__shared_mem_per_block",
    "waves_per_sm": "launch__waves_per_multiprocessor",
    "grid_size": "launch__grid_size",
    "block_size": "launch__block_size",
    "sm_count": "device__attribute_multiprocessor_count",
    "l1_hit_pct": "l1tex__t_sector_hit_rate.pct",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "issue_active_pct": "smsp__issue_active.avg.pct_of_peak_sustained_active",
}
LIMITERS = {
    "registers": "launch__occupancy_limit_registers",
    "shared_mem": "launch__occupancy_limit_shared_mem",
    "block_size": "launch__occupancy_limit_warps",
    "blocks": "launch__occupancy_limit_blocks",
    "barriers": "launch__occupancy_limit_barriers",
}
TENSOR_PIPES = (
    "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor_op_gmma.avg.pct_of_peak_sustained_active",
)
TENSOR_SRCS = (
    "bf16_dst_fp32",
    "fp16",
    "tf32_dst_fp32",
    "fp8_sparsity_off",
    "fp8_sparsity_on",
    "fp64",
    "int8",
    "int1",
)
_SIMT = {
    "ffma": 2.0,
    "fadd": 1.0,
    "fmul": 1.0,
    "hfma": 4.0,
    "hadd": 2.0,
    "hmul": 2.0,
    "dfma": 2.0,
    "dadd": 1.0,
    "dmul": 1.0,
}




def kernel_base(name: str) -> str:
    """`void at::native::foo_kernel<8, float>(char *, int)` -> `foo_kernel` (for name matching)."""
    s = name.strip().removeprefix("void ").strip()
    if s.endswith(")"):  # drop the parameter list: the last balanced (...) group
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(s[i], 0)
            if depth == 0:
                s = s[:i]
                break
    depth, out = 0, []
    for ch in s:  # drop template arguments, which may nest
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">" and depth > 0
    base = "".join(out).strip()
    return base.rsplit("::", 1)[-1].strip() or name


def _get(rec: Mapping[str, object], key: str) -> float:
    """A metric as float, NaN when missing or not a number."""
    v = rec.get(key, math.nan)
    return float(v) if isinstance(v, (int, float)) else math.nan


def _limiter(rec: Mapping[str, object]) -> str:
    """What caps theoretical occupancy (the lowest launch limit), '' at 100 %."""
    if _get(rec, M["occ_theoretical_pct"]) >= 100.0:
        return ""
    limits = {k: _get(rec, m) for k, m in LIMITERS.items() if not math.isnan(_get(rec, m))}
    if not limits:
        return ""
    low = min(limits.values())
    return "+".join(k for k, v in limits.items() if v == low)


def _row(rec: Mapping[str, object], idx: int) -> dict[str, float | str]:
    """Our columns (`NCU_COLUMNS`, `STALL_COLUMNS`) from one kernel's {metric: value} record
    (either reader)."""
    row: dict[str, float | str] = {
        "id": int(_get(rec, "ID")) if not math.isnan(_get(rec, "ID")) else idx}
    name = str(rec.get("Kernel Name", ""))
    row.update(kernel=name, kernel_base=kernel_base(name), nvtx=_nvtx_text(rec))
    nums = {col: _get(rec, metric) for col, metric in M.items()}
    nums["duration_us"] = nums["duration_us"] / 1e3
    nums["dram_gbs"] = nums["dram_gbs"] / 1e9
    row.update(nums)
    row["dram_bytes"] = _get(rec, "dram__bytes_read.sum") + _get(rec, "dram__bytes_write.sum")
    row["occ_limiter"] = _limiter(rec)
    pipes = [_get(rec, m) for m in TENSOR_PIPES if not math.isnan(_get(rec, m))]
    row["tensor_pct"] = max(pipes) if pipes else math.nan
    stall_cycles = {col: _get(rec, metric) for col, metric in STALL_COLUMNS.items()}
    row.update(stall_cycles)
    stalls = {c[6:]: v for c, v in stall_cycles.items() if c != "stall_selected" and v > 0}
    row["stall_top"] = max(stalls, key=lambda k: stalls[k]) if stalls else ""
    row.update(_flops(rec))
    row["device"] = str(rec.get("device__attribute_display_name", ""))
    return row


def _flops(rec: Mapping[str, object]) -> dict[str, float]:
    """Work and peaks for a tensor-aware roofline (Nsight's chart counts FP32/FP64 only)."""
    srcs = [_get(rec, f"sm__ops_path_tensor_src_{s}.sum") for s in TENSOR_SRCS]
    tensor = sum(v for v in srcs if not math.isnan(v))
    cycles = _get(rec, "smsp__cycles_elapsed.avg")
    simt = 0.0
    for op, w in _SIMT.items():
        per = _get(rec, f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
        if not math.isnan(per) and not math.isnan(cycles):
            simt += w * per * cycles
    best = max(range(len(TENSOR_SRCS)), key=lambda i: 0.0 if math.isnan(srcs[i]) else srcs[i])
    src = TENSOR_SRCS[best].replace("_sparsity_off", "").replace("_sparsity_on", "")
    peaks = [
        _get(
            rec,
            f"sm__ops_path_tensor_op_{g}_src_{src}_sparsity_off.sum"
            ".peak_sustained_elapsed.per_second",
        )
        for g in ("hgmma", "hmma")
    ]
    peaks = [p for p in peaks if not math.isnan(p)]
    clock = _get(rec, "smsp__cycles_elapsed.avg.per_second")
    fma = _get(rec, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
    dram = _get(rec, "dram__bytes.sum.peak_sustained") * _get(
        rec, "dram__cycles_elapsed.avg.per_second"
    )
    return {
        "flops_tensor": tensor,
        "flops_simt": simt,
        "peak_tensor_flops": max(peaks) if peaks and tensor > 0 else math.nan,
        "peak_fp32_flops": 2.0 * fma * clock,
        "peak_dram_bps": dram,
    }


def _nvtx_text(rec: Mapping[str, object]) -> str:
    """The NVTX ranges a kernel ran in, as one text (CSV exports split them over columns)."""
    parts = [
        str(v) for k, v in rec.items() if "Range" in str(k) and isinstance(v, str) and v.strip()
    ]
    return " | ".join(parts)


def frame(records: Sequence[Mapping[str, object]]) -> pd.DataFrame:
    """The documented per-kernel DataFrame (`NCU_COLUMNS` + `STALL_COLUMNS`) from metric records."""
    cols = list(NCU_COLUMNS) + list(STALL_COLUMNS)
    return pd.DataFrame([_row(r, i) for i, r in enumerate(records)], columns=cols)


def read_raw_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Kernels from a `--page raw --csv --print-units base` export (.csv or .csv.gz)."""
    p = Path(path)
    return frame(raw_records(open_text(p), str(p)))


def read_report(
    path: str | os.PathLike[str], module: Any = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(kernels, rules) from a `.ncu-rep[.gz]` through `ncu_report` (no GPU needed)."""
    records, rules = report_records(path, module)
    return frame(records), rules


TARGET_RANGE = re.compile(re.escape(TARGET_RANGE_PREFIX) + r"(\d+)")


def attribute_targets(kernels: pd.DataFrame, targets: Sequence[ReplayTargetJson]
                      ) -> pd.DataFrame:
    """Tie replayed kernels to their op (NVTX range `gpuprof_target_<i>`) and check their names.

    Adds `target` (-1 if none), `op`, `recorded_kernel` and `name_match` (the replay launched
    the kernel the trace recorded; False when e.g. cuBLAS picked another algorithm).
    """
    by_index = {int(t["index"]): t for t in targets}
    tgt = []
    for nvtx in kernels["nvtx"].astype(str):
        m = TARGET_RANGE.findall(nvtx)
        tgt.append(int(m[-1]) if m else -1)
    out = kernels.assign(target=tgt)
    out["op"] = [str(by_index[i]["op"]) if i in by_index else "" for i in tgt]
    out["recorded_kernel"] = [str(by_index[i]["kernel"]) if i in by_index else "" for i in tgt]
    out["name_match"] = [
        i in by_index
        and base in {kernel_base(k) for k in by_index[i].get("kernels") or [by_index[i]["kernel"]]}
        for i, base in zip(tgt, out["kernel_base"], strict=False)
    ]
    return out
