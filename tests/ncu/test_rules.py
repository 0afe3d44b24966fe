"""Our plain-words reading of Nsight Compute metrics, and the tensor-aware roofline."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from paths import TESTS

from jupyter_gpuprof.ncu import build_results, read_details_rules, read_raw_csv
from jupyter_gpuprof.ncu import rules as r

DATA = TESTS / "data" / "ncu"


@pytest.fixture(scope="module")
def kernels() -> pd.DataFrame:
    return read_raw_csv(DATA / "tinygpt_step_full8.raw.csv.gz")


def synthetic(**kw: float | str) -> pd.Series:
    base = {
        "id": 0,
        "kernel": "k",
        "kernel_base": "k",
        "sm_pct": 10.0,
        "mem_pct": 10.0,
        "dram_pct": 5.0,
        "tensor_pct": 0.0,
        "occ_theoretical_pct": 100.0,
        "occ_achieved_pct": 90.0,
        "waves_per_sm": 4.0,
        "stall_top": "long_scoreboard",
        "occ_limiter": "",
        "registers_per_thread": 32.0,
        "sm_count": 132.0,
        "grid_size": 1024.0,
        "duration_us": 10.0,
        "dram_bytes": 1e6,
        "flops_tensor": 0.0,
        "flops_simt": 0.0,
        "peak_tensor_flops": math.nan,
        "peak_fp32_flops": 60e12,
        "peak_dram_bps": 4.8e12,
    }
    base.update(kw)
    return pd.Series(base)


def test_verdicts_on_real_h200_kernels(kernels):
    out = r.interpret(kernels)
    assert list(out.columns) == list(r.INTERP_COLUMNS)
    v = dict(zip(out["id"], out["verdict"], strict=True))
    assert v[7] == "compute-bound"  # nvjet bf16 GEMM, tensor pipe 68 %
    assert v[2] == "compute-bound"  # layer norm at 69 % SM
    assert v[3] == "latency-bound" and "2 blocks" in out.loc[3, "why"]  # grid of 2 blocks
    assert v[0] == "latency-bound" and "long_scoreboard" in out.loc[0, "why"]


def test_memory_bound_and_what_to_try():
    d = r.interpret_kernel(synthetic(mem_pct=85.0, dram_pct=80.0, sm_pct=20.0))
    assert d["verdict"] == "memory-bound" and "fuse" in d["next_step"]


def test_fp32_gemm_without_tensor_cores_is_tensor_cores_idle():
    row = synthetic(
        kernel="void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn>(P)",
        sm_pct=90.0,
        tensor_pct=0.0,
    )
    d = r.interpret_kernel(row, "aten::mm")
    assert d["verdict"] == "tensor-cores-idle"
    assert "bf16" in d["next_step"] and "TF32" in d["next_step"]


def test_occupancy_limited_names_the_limiter():
    d = r.interpret_kernel(
        synthetic(
            occ_theoretical_pct=25.0,
            occ_achieved_pct=22.0,
            occ_limiter="registers",
            registers_per_thread=200.0,
        )
    )
    assert d["verdict"] == "occupancy-limited"
    assert "registers" in d["why"] and "200 registers" in d["why"]


def test_roofline_uses_tensor_peak_and_shape_flops(kernels):
    nvjet = kernels.iloc[7]
    by_counters = r.roofline(nvjet)
    assert by_counters["flops_source"] == "counters"
    assert by_counters["achieved_tflops"] == pytest.approx(12_884_901_888 / 23.456e-6 / 1e12)
    assert by_counters["roof_bound"] == "compute"
    assert by_counters["pct_of_roof"] == pytest.approx(58.9, abs=0.1)
    shapes = r.roofline(nvjet, r.shape_flops("aten::mm", [[8192, 512], [512, 1536]]))
    assert shapes["flops_source"] == "shapes"
    assert shapes["flops"] == by_counters["flops"]  # the counters agree with the shapes


def test_shape_flops():
    assert r.shape_flops("aten::mm", [[8, 4], [4, 2]]) == 2 * 8 * 4 * 2
    assert r.shape_flops("aten::addmm", [[2], [8, 4], [4, 2], [], []]) == 2 * 8 * 4 * 2
    assert r.shape_flops("aten::bmm", [[3, 8, 4], [3, 4, 2]]) == 2 * 3 * 8 * 4 * 2
    assert r.shape_flops("aten::linear", [[5, 8, 4], [2, 4], [2]]) == 2 * 40 * 4 * 2
    sdpa = r.shape_flops(
        "aten::_scaled_dot_product_flash_attention", [[2, 4, 16, 8], [2, 4, 16, 8], [2, 4, 16, 8]]
    )
    assert sdpa == 4 * 2 * 4 * 16 * 16 * 8
    assert math.isnan(r.shape_flops("aten::add", [[4], [4]]))
    assert math.isnan(r.shape_flops("aten::mm", [[4]]))


def test_findings_merge_into_next_steps(kernels):
    rules = read_details_rules(DATA / "tinygpt_step_full8.details.csv.gz")
    res = build_results(kernels, rules, {"mode": "cell"})
    f = res.findings()
    assert f and all(x.category == "ncu" and x.id.startswith("ncu-") for x in f)
    assert not any("nvjet" in x.title for x in f)  # compute-bound kernels need no finding
    assert all(x.evidence.startswith("Nsight Compute:") for x in f)
