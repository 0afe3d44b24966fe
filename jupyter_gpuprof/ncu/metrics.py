"""Nsight Compute reports -> one documented DataFrame row per profiled kernel, plus rule results.

Two readers give the same columns, so a report reopens without a GPU either way:
`read_raw_csv` parses `ncu --import R --csv --page raw --print-units base` (one row per kernel,
units in the second row), and `ncu_rep.read_report` uses NVIDIA's `ncu_report` module.
Rule results (Nsight Compute's guided analysis, attributed to it) come from `--page details`
CSV or `ncu_report`.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import os
import re
from pathlib import Path
from typing import Any

import pandas as pd

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
RULE_COLUMNS = {
    "id": "kernel index",
    "kernel": "kernel name",
    "rule": "Nsight Compute rule id",
    "section": "section the rule belongs to",
    "type": "OPT | WRN | INF | ERR",
    "title": "short title ('' when the source has none)",
    "message": "the rule's text",
    "speedup_type": "global | local | ''",
    "speedup_pct": "estimated speedup, % (NaN if none)",
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
_TIME = {
    "ns": 1e-9,
    "nsecond": 1e-9,
    "us": 1e-6,
    "usecond": 1e-6,
    "ms": 1e-3,
    "msecond": 1e-3,
    "s": 1.0,
    "second": 1.0,
}
_BYTES = {"byte": 1.0, "kbyte": 1e3, "mbyte": 1e6, "gbyte": 1e9, "tbyte": 1e12}


class NcuReportError(ValueError):
    """A report or export that cannot be read; the message is one line and names the file."""


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


def number(text: str) -> float:
    """A number as ncu prints it ("1,128,619.53", "n/a", "") -> float (NaN when not a number)."""
    t = text.strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return math.nan


def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
        return (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", "replace")
    except FileNotFoundError:
        raise NcuReportError(f"{path}: no such file") from None
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise NcuReportError(f"{path}: cannot read ({exc})") from None


def _scaled(value: float, unit: str, base: str) -> float:
    """Convert to the base unit named by `base` (seconds or bytes) when a unit prefix is present."""
    u = unit.strip().lower()
    table = _TIME if base == "s" else _BYTES
    return value * table[u] if u in table else value


def raw_records(text: str, source: str = "<csv>") -> list[dict[str, Any]]:
    """Parse a `--page raw --csv` export: one {column: value} dict per kernel (numbers as float)."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r]
    head = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
    if head is None or "Kernel Name" not in rows[head]:
        raise NcuReportError(
            f"{source}: not an ncu --page raw --csv export (no ID/Kernel Name header)"
        )
    names, units = rows[head], rows[head + 1] if len(rows) > head + 1 else []
    has_units = bool(units) and units[0] == ""
    out = []
    for r in rows[head + (2 if has_units else 1) :]:
        if len(r) != len(names):
            continue  # program output or a warning line mixed into the file
        rec: dict[str, Any] = {}
        for i, (k, v) in enumerate(zip(names, r, strict=False)):
            num = number(v)
            unit = units[i] if has_units else ""
            if k.startswith("gpu__time_duration"):
                num = _scaled(num, unit, "s") * 1e9  # keep ns, whatever the export used
            elif unit.lower().endswith("byte"):
                num = _scaled(num, unit, "b")
            rec[k] = v if (math.isnan(num) and v.strip() not in ("", "n/a")) else num
        out.append(rec)
    return out


def _get(rec: dict[str, Any], key: str) -> float:
    v = rec.get(key, math.nan)
    return float(v) if isinstance(v, (int, float)) else math.nan


def _limiter(rec: dict[str, Any]) -> str:
    if _get(rec, M["occ_theoretical_pct"]) >= 100.0:
        return ""
    limits = {k: _get(rec, m) for k, m in LIMITERS.items() if not math.isnan(_get(rec, m))}
    if not limits:
        return ""
    low = min(limits.values())
    return "+".join(k for k, v in limits.items() if v == low)


def _row(rec: dict[str, Any], idx: int) -> dict[str, Any]:
    """Our columns from one kernel's {metric: value} record (either reader)."""
    row: dict[str, Any] = {"id": int(_get(rec, "ID")) if not math.isnan(_get(rec, "ID")) else idx}
    name = str(rec.get("Kernel Name", ""))
    row.update(kernel=name, kernel_base=kernel_base(name), nvtx=_nvtx_text(rec))
    for col, metric in M.items():
        row[col] = _get(rec, metric)
    row["duration_us"] = row["duration_us"] / 1e3
    row["dram_gbs"] = row["dram_gbs"] / 1e9
    row["dram_bytes"] = _get(rec, "dram__bytes_read.sum") + _get(rec, "dram__bytes_write.sum")
    row["occ_limiter"] = _limiter(rec)
    pipes = [_get(rec, m) for m in TENSOR_PIPES if not math.isnan(_get(rec, m))]
    row["tensor_pct"] = max(pipes) if pipes else math.nan
    for col, metric in STALL_COLUMNS.items():
        row[col] = _get(rec, metric)
    stalls = {c[6:]: row[c] for c in STALL_COLUMNS if c != "stall_selected" and row[c] > 0}
    row["stall_top"] = max(stalls, key=lambda k: stalls[k]) if stalls else ""
    row.update(_flops(rec))
    row["device"] = str(rec.get("device__attribute_display_name", ""))
    return row


def _flops(rec: dict[str, Any]) -> dict[str, float]:
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


def _nvtx_text(rec: dict[str, Any]) -> str:
    parts = [
        str(v) for k, v in rec.items() if "Range" in str(k) and isinstance(v, str) and v.strip()
    ]
    return " | ".join(parts)


def frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The documented per-kernel DataFrame (`NCU_COLUMNS` + `STALL_COLUMNS`) from metric records."""
    cols = list(NCU_COLUMNS) + list(STALL_COLUMNS)
    return pd.DataFrame([_row(r, i) for i, r in enumerate(records)], columns=cols)


def read_raw_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Kernels from a `--page raw --csv --print-units base` export (.csv or .csv.gz)."""
    p = Path(path)
    return frame(raw_records(_open_text(p), str(p)))


def read_details_rules(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Nsight Compute rule results (`RULE_COLUMNS`) from a `--page details --csv` export."""
    p = Path(path)
    rows = list(csv.reader(io.StringIO(_open_text(p))))
    if not rows or "Rule Name" not in rows[0]:
        raise NcuReportError(f"{p}: not an ncu --page details --csv export (no 'Rule Name' column)")
    h = {k: i for i, k in enumerate(rows[0])}
    out = []
    for r in rows[1:]:
        if len(r) != len(h) or not r[h["Rule Name"]].strip():
            continue
        kind = r[h["Estimated Speedup Type"]].strip().lower()
        out.append(
            {
                "id": int(number(r[h["ID"]])),
                "kernel": r[h["Kernel Name"]],
                "rule": r[h["Rule Name"]],
                "section": r[h["Section Name"]],
                "type": r[h["Rule Type"]],
                "title": "",
                "message": " ".join(r[h["Rule Description"]].split()),
                "speedup_type": kind,
                "speedup_pct": number(r[h["Estimated Speedup"]]),
            }
        )
    return pd.DataFrame(out, columns=list(RULE_COLUMNS))


def details_metrics(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Every (kernel id, section, metric, unit, value) row of a `--page details --csv` export."""
    p = Path(path)
    rows = list(csv.reader(io.StringIO(_open_text(p))))
    h = {k: i for i, k in enumerate(rows[0])} if rows else {}
    need = ("ID", "Section Name", "Metric Name", "Metric Unit", "Metric Value")
    if not all(k in h for k in need):
        raise NcuReportError(f"{p}: not an ncu --page details --csv export")
    out = [
        (
            int(number(r[h["ID"]])),
            r[h["Section Name"]],
            r[h["Metric Name"]],
            r[h["Metric Unit"]],
            number(r[h["Metric Value"]]),
        )
        for r in rows[1:]
        if len(r) >= h["Metric Value"] + 1 and r[h["Metric Name"]]
    ]
    return pd.DataFrame(out, columns=["id", "section", "metric", "unit", "value"])


TARGET_RANGE = re.compile(r"gpuprof_target_(\d+)")


def attribute_targets(kernels: pd.DataFrame, targets: list[dict[str, Any]]) -> pd.DataFrame:
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
