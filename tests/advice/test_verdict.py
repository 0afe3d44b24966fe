"""Each verdict category's rule on a synthetic trace built to have that bottleneck."""

import pytest
from scenarios import (
    SCENARIOS,
    SIMT_GEMM,
    build,
    comm_old_names,
    launch,
    precision,
    scenario_analysis,
)
from tracebuilder import TraceBuilder

from jupyter_gpuprof.advice import rules
from jupyter_gpuprof.advice.findings import CATEGORIES
from jupyter_gpuprof.advice.verdict import advise
from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

RULE_OF = {"precision": "precision_rule", "memory": "memory_rule", "input": "input_rule",
           "sync": "sync_rule", "launch": "launch_rule", "host": "host_rule",
           "transfer": "transfer_rule", "comm": "comm_rule"}


_analysis = scenario_analysis


@pytest.mark.parametrize("category", list(SCENARIOS))
def test_scenario_gets_its_verdict(tmp_path, category):
    a = _analysis(tmp_path, SCENARIOS[category])
    advice = advise(a)
    assert advice.verdict.category == category, [
        (f.category, f.expected_gain_pct) for f in advice.findings]
    assert advice.verdict.category in CATEGORIES
    if category != "compute":
        top = advice.findings[0]
        assert top.category == category and top.expected_gain_pct >= 5
        assert top.evidence and top.fix


@pytest.mark.parametrize("category", [c for c in SCENARIOS if c != "compute"])
def test_verdict_changes_when_its_rule_is_removed(tmp_path, monkeypatch, category):
    a = _analysis(tmp_path, SCENARIOS[category])
    rule = getattr(rules, RULE_OF[category])
    monkeypatch.setattr("jupyter_gpuprof.advice.verdict.RULES",
                        {c: r for c, r in rules.RULES.items() if r is not rule})
    assert advise(a).verdict.category != category


def test_expected_gains_come_from_the_what_if_replay(tmp_path):
    # precision: 9 ms of SIMT GEMM in a 9.11 ms GPU-bound step; the replay re-times the GEMM at
    # the Tensor-Core rate and the gain is 1 - predicted / real
    top = advise(_analysis(tmp_path, precision)).findings[0]
    assert top.category == "precision" and top.cost_ms == pytest.approx(9.0)
    assert top.predicted_step_ms is not None and "fp32 matmul kernels" in top.driver
    assert top.expected_gain_pct == pytest.approx(100 * (1 - top.predicted_step_ms / 9.11),
                                                  abs=0.06)
    assert top.expected_gain_pct > 75  # the assumed 4x speed-up said 67.5 %


def test_old_and_new_nccl_kernel_names_are_both_communication(tmp_path):
    a = _analysis(tmp_path, comm_old_names)
    assert a.comm["comm_ms"] == pytest.approx(5.0) and a.comm["exposed_ms"] == pytest.approx(5.0)
    assert advise(a).verdict.category == "comm"


def test_a_lone_sync_on_a_gpu_bound_step_is_not_flagged(tmp_path):
    def gpu_bound_with_item(b: TraceBuilder, s: float) -> float:
        ext = b.op("aten::mm", s + 10, 8.0, types=["float", "float"])
        b.kernel(SIMT_GEMM, s + 12, s + 20, 9960.0, ext=ext)
        b.sync(s + 20, 9965.0)  # loss.item() waits for the GEMM; next step launches at once
        return 10_000.0

    advice = advise(_analysis(tmp_path, gpu_bound_with_item))
    assert advice.verdict.category == "precision"
    assert "sync" not in [f.category for f in advice.findings]


def test_real_time_overrules_a_launch_bound_looking_trace(tmp_path):
    """Under the profiler the host looks slow; the unprofiled baseline says GPU-bound."""
    a_trace_only = _analysis(tmp_path, launch, baseline_ms=None)
    assert advise(a_trace_only).verdict.category == "launch"
    # the unprofiled step is barely longer than the GPU work (300 x 3 us = 0.9 ms)
    a_real = _analysis(tmp_path, launch, baseline_ms=0.92)
    verdict = advise(a_real).verdict
    assert verdict.category != "launch"
    assert any("profiler slowed" in r for r in verdict.reasons)


def test_confidence_is_lower_without_a_baseline(tmp_path):
    b, _ = build(precision)
    a = analyze(load_trace(b.write(tmp_path / "t.json.gz")))
    v = advise(a).verdict
    assert v.category == "precision" and v.confidence != "high"
    assert any("no unprofiled baseline" in r for r in v.reasons)


def test_cpu_only_trace_has_no_gpu_verdict(tmp_path):
    b = TraceBuilder(gpu=False)
    b.step(1, 0.0, 100.0)
    b.op("aten::mm", 10.0, 50.0)
    a = analyze(load_trace(b.write(tmp_path / "cpu.json.gz")))
    v = advise(a).verdict
    assert not a.gpu_available and v.category is None and "GPU metrics unavailable" in v.summary


def test_the_memory_verdict_reads_memory_bandwidth():
    from jupyter_gpuprof.advice.verdict import verdict_label
    from jupyter_gpuprof.views.text import verdict_name

    assert verdict_label("memory") == "memory bandwidth" and verdict_label("input") == "input"
    assert verdict_name({"category": "memory", "label": verdict_label("memory")}) == \
        "memory bandwidth"
