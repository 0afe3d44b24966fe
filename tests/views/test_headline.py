"""A report's first screen: the verdict, the top fix as code, its worth, how to measure it."""

from __future__ import annotations

import copy

import pytest
from paths import TESTS
from tracebuilder import TraceBuilder

import jupyter_gpuprof
from jupyter_gpuprof.views.html import render_html
from jupyter_gpuprof.views.text import render_headline, render_text

REAL = TESTS / "data" / "real"


@pytest.fixture(scope="module")
def precision() -> dict:
    """The H200 capture of fp32 GEMMs with TF32 off (verdict precision)."""
    return jupyter_gpuprof.analyze(REAL / "precision").to_json()


def test_the_headline_says_verdict_fix_worth_and_how_to_try(precision):
    text = render_headline(precision)
    lines = text.splitlines()
    assert lines[0] == "Verdict: precision (high confidence)"
    # cost, step, prediction and gain in the one line every view shows (`Finding.cost_line`)
    assert "Top fix: fp32 matmuls miss the Tensor Cores — costs 117.42 ms of the 118.70 ms " \
           "step; predicted step 118.70 ms → 21.64 ms, gain ≈82%" in text
    assert any(ln.startswith("    torch.backends.cuda.matmul.allow_tf32 = True") for ln in lines)
    assert lines[-1].startswith("Measure it first: %%gpuprofile --try tf32,amp (a cell) or "
                                "jupyter gpuprof run --try tf32,amp -- python train.py")


def test_a_finding_names_the_tries_that_measure_it(precision):
    """The summary says which `--try` fixes apply a finding's fix: every view reads that."""
    (f,) = [f for f in precision["findings"] if f["category"] == "precision"]
    assert f["try_fixes"] == ["tf32", "amp"]
    assert "Measure it first: %%gpuprofile --try tf32,amp" in render_text(precision)
    assert "Measure it first: %%gpuprofile --try tf32,amp" in render_html(precision)
    sync = jupyter_gpuprof.analyze(REAL / "sync").to_json()
    assert [f["try_fixes"] for f in sync["findings"] if f["category"] == "sync"] == [[]]
    assert "Measure it first" not in render_headline(sync)  # no try removes a read-back


def test_the_headline_shows_what_a_try_measured(precision):
    s = copy.deepcopy(precision)
    s["tries"] = [{"fix": "amp", "measured_gain_pct": 61.5, "change": {"verdict": "significant"}},
                  {"fix": "compile", "measured_gain_pct": 3.0, "change": {"verdict": "noise"}}]
    assert "Measured: --try amp +61.5% (significant)" in render_headline(s)
    assert "compile" not in render_headline(s)  # not a fix of this finding


def test_a_cpu_run_headline_says_there_is_no_gpu_verdict(tmp_path):
    b = TraceBuilder(gpu=False)
    b.step(1, 0.0, 100.0)
    b.op("aten::mm", 10.0, 50.0)
    text = render_headline(jupyter_gpuprof.analyze(b.write(tmp_path / "cpu.json.gz")).to_json())
    assert text.startswith("!! GPU metrics unavailable")
    assert "Top fix" not in text and "No fix found" not in text


def test_throughput_keeps_a_small_rate_readable(precision):
    """A CPU run's few GFLOP/s read as such, never "0.0 TFLOP/s (? matmuls)"."""
    from jupyter_gpuprof.views.text import throughput
    s = copy.deepcopy(precision)
    s["flops"].update(achieved_tflops=0.042, per_step=3.1e9, dtype="", mfu_pct=None)
    assert throughput(s) == "Achieved 42.00 GFLOP/s; 3.10 GFLOP per step"
    s["flops"].update(achieved_tflops=512.0, per_step=4.2e13, dtype="bf16")
    assert throughput(s) == "Achieved 512.00 TFLOP/s (bf16 matmuls); 42.00 TFLOP per step"
