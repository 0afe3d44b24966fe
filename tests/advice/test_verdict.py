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


def test_tf32_matmuls_get_the_bf16_autocast_finding_priced_by_the_what_if(tmp_path):
    """TF32 already on (the script sets it) is not "nothing to fix": bf16 runs the matmuls at
    twice the TF32 rate on Hopper and halves the activations' bytes; --try amp measures it."""
    from scenarios import tf32

    advice = advise(scenario_analysis(tmp_path, tf32))
    (f,) = [f for f in advice.findings if f.category == "precision"]
    assert f.id == "bf16-autocast" and "autocast" in f.fix and "allow_tf32" not in f.fix
    assert f.data["try_fixes"] == ["amp"]
    # 8 ms of TF32 GEMM at twice the rate (the fp32 gelu unchanged: autocast's casts cost what
    # its bytes save): the 9.1 ms GPU-bound step saves ≈4 ms
    assert f.predicted_step_ms == pytest.approx(9.1 - 4.0, abs=0.3)
    assert advice.verdict.category == "precision"


def test_fp32_attention_beside_tf32_matmuls_is_priced_as_bf16_autocast(tmp_path):
    """A small GEMM that misses the Tensor Cores must not hide the TF32 GEMMs and the fp32
    memory-efficient attention beside it (nanoGPT fp32 on the H200: 0.3 ms of SIMT GEMM, 88 ms
    of TF32 GEMM, 77 ms of fp32 attention; bf16 measured -56 %): the rule and the what-if price
    the same bf16 autocast fix."""
    from scenarios import tf32_attention

    advice = advise(scenario_analysis(tmp_path, tf32_attention))
    (f,) = [f for f in advice.findings if f.category == "precision"]
    assert f.id == "bf16-autocast" and f.data["try_fixes"] == ["amp"]
    assert f.data["fp32_attention_ms_per_step"] == pytest.approx(4.0, abs=0.01)
    # GEMM 4 → 2 ms, attention 4 → 0.5 ms, the SIMT GEMM at the bf16 rate, gelu unchanged
    assert f.predicted_step_ms == pytest.approx(9.31 - 2.0 - 3.5 - 0.17, abs=0.3)
    assert "flash" in f.driver and advice.verdict.category == "precision"


def test_no_tf32_finding_where_the_matmuls_are_bf16_already(tmp_path):
    assert not [f for f in advise(scenario_analysis(tmp_path, SCENARIOS["compute"])).findings
                if f.category == "precision"]


def test_epoch_stalls_are_priced_on_the_wall_time_and_lead_where_they_cost_most(tmp_path):
    """A launch-bound 10 ms step whose every 16th step waits 500 ms for new DataLoader workers
    (the DCGAN example's loop): the median says launch, the user pays 41 ms a step over the
    long run, most of it in the epoch stalls; the input finding prices them and leads."""
    from scenarios import launch

    base = [10.2] * 20
    base[5] = 510.2
    events = [{"step": 5, "what": "loader-start", "ms": 3.0, "workers": 2,
               "persistent": False, "batches": 16}]
    a = scenario_analysis(tmp_path, launch, base, events)
    assert a.wall_ms == pytest.approx(10.2 + 500 / 16, rel=0.01)
    advice = advise(a)
    top = advice.findings[0]
    assert advice.verdict.category == "input" and top.category == "input"
    assert top.data["stall_ms_per_step"] == pytest.approx(500 / 16, rel=0.01)
    assert top.expected_gain_pct == pytest.approx(100 * 0.9 * 31.25 / 41.45, abs=3)
    assert "wall time" in advice.verdict.summary and "every 16 steps" in top.evidence
    launch_gain = next(f for f in advice.findings if f.category == "launch")
    # the same ms saved per step, a smaller share of the longer long-run step
    assert launch_gain.expected_gain_pct < launch_gain.step_gain_pct
    without = advise(scenario_analysis(tmp_path, launch, base))  # nothing says what ran there
    assert without.verdict.category == "launch"


def test_a_loop_waiting_for_its_dataloader_workers_is_input_bound_whatever_the_trace_says(
        tmp_path):
    """A launch-bound step in the trace whose unprofiled baseline waits 7 of its 10 ms for one
    DataLoader worker (the MNIST examples: the profiler slows the training process until the
    worker keeps up): the loader sets the pace, the input fix is priced on the wait, and
    launch saves nothing until then. Loading in the training process (no workers) adds up
    instead: every fix keeps its gain."""
    from scenarios import launch

    from jupyter_gpuprof.analysis.loader_pace import loader_pace

    alone = advise(scenario_analysis(tmp_path, launch, 10.0))
    assert alone.verdict.category == "launch"
    paced = advise(scenario_analysis(tmp_path, launch, 10.0, loader=loader_pace([7.0] * 10, 1)))
    assert paced.verdict.category == "input"
    top = paced.findings[0]
    assert top.category == "input" and top.expected_gain_pct >= 65
    assert "waiting for its 1 DataLoader worker" in top.evidence
    held = next(f for f in paced.findings if f.category == "launch")
    assert held.expected_gain_pct == 0 and held.data["after_input_fix_gain_pct"] > 20
    assert "set the pace" in held.evidence
    inline = advise(scenario_analysis(tmp_path, launch, 10.0, loader=loader_pace([3.0] * 10, 0)))
    own = next(f for f in inline.findings if f.category == "launch")
    assert own.expected_gain_pct > 20 and "after_input_fix_gain_pct" not in own.data
    assert next(f for f in inline.findings if f.category == "input").expected_gain_pct >= 25


def test_a_spike_before_the_epoch_starts_is_not_the_new_epochs(tmp_path):
    """DCGAN's first epoch ended on a partial batch of 40 that ran 437 ms, the step before
    its workers started again: one stall of three steps had all been priced as the workers'
    start-up, which persistent workers would remove. The steps before a loader starts an
    epoch are a stall of their own, with nothing recorded to name it."""
    from scenarios import launch

    base = [10.2] * 20
    base[4], base[5] = 410.2, 510.2
    events = [{"step": 5, "what": "loader-start", "ms": 3.0, "workers": 2,
               "persistent": False, "batches": 16}]
    a = scenario_analysis(tmp_path, launch, base, events)
    assert a.spikes is not None
    before, epoch = a.spikes.stalls
    assert (before.first, before.last, before.cause) == (4, 4, None)
    assert (epoch.first, epoch.last, epoch.cause) == (5, 5, "loader-start")
    assert a.stall_ms("input") == pytest.approx(500 / 16, rel=0.01)
    # the capture saw that loader's partial last batch end its first epoch: it is named
    events[0].update(epoch=1, last_batch=40)
    named = scenario_analysis(tmp_path, launch, base, events).spikes
    assert named is not None and named.stalls[0].cause == "partial-batch"
    assert "partial batch" in named.summary()
