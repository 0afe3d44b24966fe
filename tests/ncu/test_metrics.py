"""Nsight Compute readers on real H200 reports: values match ncu's own CSV exports."""

from __future__ import annotations

import csv
import gzip
import io
import math

import pandas as pd
import pytest
from paths import TESTS

from jupyter_gpuprof.ncu import NcuReportError, readers, rep_reader
from jupyter_gpuprof.ncu import metrics as n

DATA = TESTS / "data" / "ncu"
RAW = DATA / "tinygpt_step_full8.raw.csv.gz"
DETAILS = DATA / "tinygpt_step_full8.details.csv.gz"
REPORT = DATA / "tinygpt_step_full3.ncu-rep.gz"
KNOWN_RULES = {
    "SOLBottleneck",
    "IssueSlotUtilization",
    "AchievedOccupancy",
    "CPIStall",
    "HighPipeUtilization",
    "LaunchConfiguration",
    "MemoryCacheAccessPattern",
    "MemoryL2Compression",
    "PMSamplingData",
    "SOLFPRoofline",
    "WorkloadImbalance",
    "TheoreticalOccupancy",
    "UncoalescedGlobalAccess",
    "FPInstructions",
    "SharedMemoryConflicts",
}
# our column -> (raw metric, scale from ncu's base unit)
DIRECT = {
    "sm_pct": "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "mem_pct": "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram_pct": "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "occ_achieved_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "occ_theoretical_pct": "sm__maximum_warps_per_active_cycle_pct",
    "l1_hit_pct": "l1tex__t_sector_hit_rate.pct",
    "l2_hit_pct": "lts__t_sector_hit_rate.pct",
    "registers_per_thread": "launch__registers_per_thread",
    "waves_per_sm": "launch__waves_per_multiprocessor",
    "grid_size": "launch__grid_size",
    "stall_long_scoreboard": (
        "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
    ),
    "tensor_pct": "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
}


@pytest.fixture(scope="module")
def raw_rows() -> list[dict[str, str]]:
    rows = list(csv.reader(io.StringIO(gzip.decompress(RAW.read_bytes()).decode())))
    return [dict(zip(rows[0], r, strict=False)) for r in rows[2:]]


@pytest.fixture(scope="module")
def kernels() -> pd.DataFrame:
    return n.read_raw_csv(RAW)


def ncu_number(text: str) -> float:
    return float(text.replace(",", ""))


def test_one_row_per_kernel_with_documented_columns(kernels):
    assert len(kernels) == 8
    assert list(kernels.columns) == list(n.NCU_COLUMNS) + list(n.STALL_COLUMNS)
    assert kernels["id"].tolist() == list(range(8))
    assert kernels["kernel_base"].tolist() == [
        "vectorized_gather_kernel",
        "elementwise_kernel",
        "vectorized_layer_norm_kernel",
        "vectorized_elementwise_kernel",
        "vectorized_elementwise_kernel",
        "vectorized_elementwise_kernel",
        "elementwise_kernel",
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT",
    ]


def test_values_match_ncus_raw_csv_for_every_kernel(kernels, raw_rows):
    for (_, k), r in zip(kernels.iterrows(), raw_rows, strict=True):
        assert k["kernel"] == r["Kernel Name"]
        assert k["duration_us"] == pytest.approx(ncu_number(r["gpu__time_duration.sum"]) / 1e3)
        for col, metric in DIRECT.items():
            assert k[col] == pytest.approx(ncu_number(r[metric])), (k["id"], col)
        bytes_ = ncu_number(r["dram__bytes_read.sum"]) + ncu_number(r["dram__bytes_write.sum"])
        assert k["dram_bytes"] == pytest.approx(bytes_)
        assert k["dram_gbs"] == pytest.approx(ncu_number(r["dram__bytes.sum.per_second"]) / 1e9)


def test_values_match_ncus_details_export_of_the_same_report(kernels):
    m = readers.details_metrics(DETAILS)
    named = {
        "duration_us": ("GPU Speed Of Light Throughput", "Duration", 1e-3),
        "mem_pct": ("GPU Speed Of Light Throughput", "Memory Throughput", 1),
        "sm_pct": ("GPU Speed Of Light Throughput", "Compute (SM) Throughput", 1),
        "dram_pct": ("GPU Speed Of Light Throughput", "DRAM Throughput", 1),
        "occ_achieved_pct": ("Occupancy", "Achieved Occupancy", 1),
        "occ_theoretical_pct": ("Occupancy", "Theoretical Occupancy", 1),
        "l1_hit_pct": ("Memory Workload Analysis", "L1/TEX Hit Rate", 1),
        "l2_hit_pct": ("Memory Workload Analysis", "L2 Hit Rate", 1),
        "registers_per_thread": ("Launch Statistics", "Registers Per Thread", 1),
    }
    for _, k in kernels.iterrows():
        for col, (section, metric, scale) in named.items():
            v = m[(m["id"] == k["id"]) & (m["section"] == section) & (m["metric"] == metric)]
            assert len(v), (section, metric)
            assert k[col] == pytest.approx(v["value"].iloc[0] * scale), (k["id"], col)


def test_occupancy_limiter_and_stall_top(kernels):
    nvjet, norm = kernels.iloc[7], kernels.iloc[2]
    assert nvjet["occ_limiter"] == "registers+shared_mem"  # 1 block/SM from both
    assert norm["occ_limiter"] == "registers"  # 12 blocks of 4 warps = 75 %
    assert kernels.iloc[0]["occ_limiter"] == ""  # 100 % theoretical
    assert kernels.iloc[5]["stall_top"] == "long_scoreboard"
    assert norm["stall_top"] == "not_selected"


def test_tensor_aware_work_from_counters(kernels):
    nvjet = kernels.iloc[7]
    # the QKV projection: 2 * 8192 * 512 * 1536 FLOPs, all on the bf16 tensor path
    assert nvjet["flops_tensor"] == 2 * 8192 * 512 * 1536
    assert nvjet["peak_tensor_flops"] == pytest.approx(932.19e12, rel=1e-3)
    assert nvjet["peak_dram_bps"] == pytest.approx(4.80e12, rel=1e-2)
    assert kernels.iloc[0]["flops_tensor"] == 0 and math.isnan(kernels.iloc[0]["peak_tensor_flops"])


def test_rule_results_from_details_csv():
    rules = readers.read_details_rules(DETAILS)
    assert list(rules.columns) == list(readers.RULE_COLUMNS)
    assert len(rules) == 93
    assert set(rules["id"]) == set(range(8))
    assert set(rules["rule"]) <= KNOWN_RULES
    assert set(rules["type"]) == {"OPT", "WRN", "INF"}
    cpi = rules[(rules["id"] == 0) & (rules["rule"] == "CPIStall") & (rules["type"] == "OPT")]
    assert cpi["speedup_pct"].iloc[0] == pytest.approx(56.55)
    assert cpi["speedup_type"].iloc[0] == "global"
    assert "38.1 cycles" in cpi["message"].iloc[0]
    launch = rules[(rules["id"] == 3) & (rules["rule"] == "LaunchConfiguration")]
    assert "only 2 blocks" in launch["message"].iloc[0]


def test_ncu_report_module_reads_the_binary_report():
    mod = rep_reader.import_ncu_report()
    if mod is None:
        pytest.skip("ncu_report not importable (pip install ncu-report)")
    kernels, rules = n.read_report(REPORT, mod)
    assert kernels["kernel_base"].tolist() == [
        "vectorized_gather_kernel",
        "elementwise_kernel",
        "vectorized_layer_norm_kernel",
    ]
    assert kernels["duration_us"].tolist() == pytest.approx([9.376, 13.44, 21.664])
    assert kernels.iloc[2]["occ_limiter"] == "registers"
    assert kernels["nvtx"].str.contains("train_step").all()
    assert len(rules) == 31 and set(rules["rule"]) <= KNOWN_RULES
    assert rules.iloc[0]["title"] == "Latency Issue"


WITH_CSV = [p for p in sorted(DATA.glob("*.ncu-rep.gz"))
            if p.with_name(p.name.replace(".ncu-rep.gz", ".raw.csv.gz")).is_file()]


def test_a_report_with_its_own_csv_export_is_checked_in():
    assert WITH_CSV, "regenerate one with benchmarks/ncu_gpu_check.sh (report + raw CSV)"


@pytest.mark.parametrize("rep", WITH_CSV, ids=lambda p: p.name)
def test_both_readers_agree_on_the_same_report(rep):
    """For reports regenerated with their raw CSV (benchmarks/ncu_gpu_check.sh writes both)."""
    csv_path = rep.with_name(rep.name.replace(".ncu-rep.gz", ".raw.csv.gz"))
    mod = rep_reader.import_ncu_report()
    if mod is None:
        pytest.skip("ncu_report not importable (pip install ncu-report)")
    from_rep, _ = n.read_report(rep, mod)
    from_csv = n.read_raw_csv(csv_path)
    for col in (
        "duration_us",
        "sm_pct",
        "mem_pct",
        "dram_pct",
        "occ_achieved_pct",
        "occ_theoretical_pct",
        "l1_hit_pct",
        "l2_hit_pct",
        "tensor_pct",
    ):
        # the CSV prints two decimals
        assert from_rep[col].tolist() == pytest.approx(from_csv[col].tolist(), abs=0.006), col


def test_kernel_base_and_numbers():
    assert (
        n.kernel_base("void at::native::(anonymous namespace)::foo<float, 2>(int, T1 *)") == "foo"
    )
    assert n.kernel_base("nvjet_sm90_tst_64x128_NTN") == "nvjet_sm90_tst_64x128_NTN"
    assert (
        n.kernel_base(
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(T1::Params)"
        )
        == "Kernel2"
    )
    assert readers.number("1,128,619,528,619.53") == 1128619528619.53
    assert math.isnan(readers.number("n/a"))


def test_unreadable_inputs_give_one_line_errors(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("hello,world\n1,2\n")
    with pytest.raises(NcuReportError, match="not an ncu --page raw"):
        n.read_raw_csv(bad)
    with pytest.raises(NcuReportError, match="no such file"):
        n.read_raw_csv(tmp_path / "missing.csv")
    with pytest.raises(NcuReportError, match="Rule Name"):
        readers.read_details_rules(bad)


def test_program_output_mixed_into_a_csv_is_skipped():
    text = gzip.decompress(RAW.read_bytes()).decode()
    lines = text.splitlines()
    noisy = "\n".join(lines[:2] + ["loss 1.23", "==PROF== Disconnected"] + lines[2:])
    assert len(n.frame(readers.raw_records(noisy))) == 8


def test_rule_results_match_the_printed_details_page():
    """ncu's human-readable details page lists the same rule results per kernel."""
    import re

    text = gzip.decompress((DATA / "tinygpt_step_full8.details.txt.gz").read_bytes()).decode()
    printed: dict[int, list[tuple[str, float]]] = {}
    kid = -1
    for line in text.splitlines():
        if re.match(r"^  \S.*\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\), Context", line):
            kid += 1
            printed[kid] = []
        m = re.match(r"^    (OPT|WRN|INF)\s+(?:Est\. (?:Global |Local )?Speedup: ([\d.]+)%)?", line)
        if m:
            printed[kid].append((m.group(1), float(m.group(2)) if m.group(2) else math.nan))
    rules = readers.read_details_rules(DETAILS)
    assert sorted(printed) == list(range(8))
    for i, items in printed.items():
        mine = rules[rules["id"] == i]
        assert sorted(t for t, _ in items) == sorted(mine["type"]), i
        want = sorted(round(v, 2) for _, v in items if v == v)
        got = sorted(round(v, 2) for v in mine["speedup_pct"] if v == v)
        assert got == pytest.approx(want, abs=0.01), i


def test_ncu_report_refuses_a_file_that_is_not_a_report(tmp_path):
    mod = rep_reader.import_ncu_report()
    if mod is None:
        pytest.skip("ncu_report not importable (pip install ncu-report)")
    bad = tmp_path / "x.ncu-rep"
    bad.write_bytes(b"not a report\n")
    with pytest.raises(NcuReportError):
        n.read_report(bad, mod)
