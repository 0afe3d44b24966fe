"""One number per quantity: the profiled median, the step numbering, calls, shares and a
finding's cost are decided once in the summary, so every view that formats them agrees.

Each test removes what the rule needs and would fail: a second step series, a 0-based
number, a total beside per-step times, a share computed against another denominator.
"""

import shutil

import pytest
from paths import TESTS

from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.report.finding_line import cost_line
from jupyter_gpuprof.report.tables import KERNEL_ROWS
from jupyter_gpuprof.stats import describe_steps
from jupyter_gpuprof.views.text import render_text

REAL = TESTS / "data" / "real"


@pytest.fixture(scope="module")
def sync(tmp_path_factory) -> dict:
    """The H200 run whose step reads back with `.item()` (a sync finding with a prediction)."""
    folder = tmp_path_factory.mktemp("runs") / "sync"
    shutil.copytree(REAL / "sync", folder)
    return analyze_path(folder).to_json()


def test_the_profiled_median_is_the_median_of_the_series_every_view_draws(sync):
    st = sync["steps"]
    assert st["profiled"]["median_ms"] == pytest.approx(
        describe_steps(st["profiled_ms"])["median_ms"], rel=1e-6)
    # the timeline's step bands are the same steps with the same times and ids
    bands = sync["timeline"]["steps"]
    assert [b["dur_ms"] for b in bands] == pytest.approx(st["profiled_ms"], abs=1e-4)
    assert [b["step"] for b in bands] == st["profiled_step_ids"]
    assert [b["number"] for b in bands] == list(range(1, len(st["profiled_ms"]) + 1))


def test_steps_are_numbered_from_one(sync):
    st = sync["steps"]
    assert st["outlier_steps"] == [i + 1 for i in st["outliers"]]


def test_calls_are_per_step_beside_per_step_times(sync):
    n = sync["basis"]["n_profiled_steps"]
    assert n > 1
    for row in sync["ops"] + sync["kernels"] + sync["syncs"]["top"]:
        assert row["calls_per_step"] == pytest.approx(row["calls"] / n)
    text = render_text(sync)
    assert "calls/step" in text


def test_every_op_and_kernel_row_carries_both_shares_against_one_denominator(sync):
    gpu = sum(k["total_us"] for k in sync["kernels"])
    step = sync["basis"]["real_step_ms"]
    for k in sync["kernels"]:
        assert k["pct_of_gpu"] == pytest.approx(100 * k["total_us"] / gpu)
        assert k["pct_of_step"] == pytest.approx(100 * k["ms_per_step"] / step)
    for o in sync["ops"]:
        assert o["pct_of_gpu"] == pytest.approx(100 * o["cuda_self_us"] / gpu)
        assert o["gpu_pct_of_step"] == pytest.approx(100 * o["cuda_self_ms_per_step"] / step)


def test_every_kernel_ships_and_the_label_says_how_much_of_the_gpu_time_it_covers(sync):
    table = sync["kernel_table"]
    assert table["total"] > 15 and table["shown"] == len(sync["kernels"]) == table["total"]
    assert table["shown"] <= KERNEL_ROWS
    assert table["covered_pct_of_gpu"] == pytest.approx(100.0)
    assert table["label"] == f"{table['total']} of {table['total']} kernels, covering 100.0% " \
                             "of GPU time"
    assert table["label"] in render_text(sync)


def test_an_op_carries_all_its_shapes_and_the_kernels_it_launched(sync):
    n = sync["basis"]["n_profiled_steps"]
    for o in sync["ops"]:
        assert sum(s["calls"] for s in o["shapes"]) == o["calls"], o["name"]
        # the linked kernels are the op's own device time, as the op table counts it
        launched = sum(k["ms_per_step"] for k in o["kernels"]) * n * 1e3
        if len(o["kernels"]) < 20:
            assert launched == pytest.approx(o["cuda_self_us"], rel=1e-6, abs=1e-3), o["name"]
    mm = next(o for o in sync["ops"] if o["kernels"] and o["cuda_self_us"] > 0)
    kernel = next(k for k in sync["kernels"] if k["name"] == mm["kernels"][0]["name"])
    assert mm["name"] in kernel["ops"]


def test_kernels_carry_short_names_launch_shapes_and_tensor_core_eligibility(sync):
    ks = sync["kernels"]
    templated = [k for k in ks if "<" in k["name"]]
    # the own name, and for a wrapper what it runs: never the whole template
    assert templated and all(len(k["short_name"]) < len(k["name"]) and "(" not in k["short_name"]
                             and k["short_name"].split("<")[0] in k["name"] for k in templated)
    assert all(k["grid"] and k["block"] for k in ks if k["kind"] not in ("memcpy", "memset"))
    assert any(k["occupancy_pct"] is not None for k in ks)
    assert all(k["tensor_core_eligible"] == (k["kind"] in ("gemm", "conv", "attention"))
               for k in ks)


def test_a_findings_cost_and_gain_read_in_one_line_with_the_predicted_step(sync):
    priced = [f for f in sync["findings"] if f["predicted_step_ms"] is not None]
    assert priced
    for f in sync["findings"]:
        assert f["cost_line"] == cost_line(f, sync["steps"]["median_ms"])
        assert f"{f['title']} — {f['cost_line']}" in render_text(sync)
    f = priced[0]
    assert f["cost_line"].startswith("costs ") and " of the " in f["cost_line"]
    assert "predicted step " in f["cost_line"] and "gain ≈" in f["cost_line"]


def test_cost_line_wording():
    f = {"cost_ms": 0.19, "predicted_step_ms": 54.7, "expected_gain_pct": 14.1}
    assert cost_line(f, 63.7) == ("costs 0.19 ms of the 63.70 ms step; predicted step "
                                  "63.70 ms → 54.70 ms, gain ≈14%")
    assert cost_line({**f, "predicted_step_ms": None}, 63.7) == \
        "costs 0.19 ms of the 63.70 ms step; gain ≈14%"
    assert cost_line({**f, "predicted_wall_ms": 60.0}, 63.7, 70.0) == (
        "costs 0.19 ms of the 63.70 ms step; predicted a step over the long run 70.00 ms → "
        "60.00 ms; median step 63.70 ms → 54.70 ms, gain ≈14%")


def test_the_sync_evidence_counts_calls_per_step_as_they_are(sync):
    f = next(f for f in sync["findings"] if f["category"] == "sync")
    assert "×" in f["evidence"]
    # "×1.8/step", never a count truncated to a whole call
    assert "sync calls per step" in f["evidence"]
