"""Each fix of the what-if model as a graph transformation, with exact replay arithmetic.

Every trace here is built so the step's timing follows by hand from the replay rules (host
items in order, a launch reaches the GPU 5 µs after its call starts, a sync returns 2 µs
after the GPU is done); the replay of the unchanged graph reproduces the profiled step.
"""

import pytest
from scenarios import DATALOADER, SIMT_GEMM, TC_GEMM
from whatif_graphs import ELEMENTWISE, REDUCE, STEPS, graph_of, launch, sync, ten_adds

from jupyter_gpuprof.advice import fusion, thresholds, whatif, whatif_precision
from jupyter_gpuprof.advice.verdict import advise
from jupyter_gpuprof.analysis.hardware import peak_tflops
from jupyter_gpuprof.analysis.step_replay import replay


def test_unchanged_graph_replays_the_profiled_step(tmp_path):
    def step(b, s):
        launch(b, s, TC_GEMM, 300.0)
        sync(b, s + 10, s + 307)
        return 310.0

    _, g = graph_of(tmp_path, step)
    assert g.launch_latency_us == pytest.approx(5.0)
    assert replay(g) == pytest.approx(0.310)


def test_precision_retimes_fp32_gemms_from_their_flops(tmp_path):
    dims = [[4096, 8192], [8192, 8192]]

    def step(b, s):
        launch(b, s, SIMT_GEMM, 9000.0, dims=dims)
        sync(b, s + 10, s + 9007)
        return 9010.0

    _, g = graph_of(tmp_path, step)
    assert replay(g) == pytest.approx(9.010)
    flops = 2 * 4096 * 8192 * 8192
    rate = peak_tflops("NVIDIA H200", "tf32") * thresholds.TENSOR_CORE_EFFICIENCY  # no TC kernel
    changed, driver = whatif.precision_fix(g)
    # the period is 10 µs of host time plus the GEMM, now at the Tensor-Core rate
    assert replay(changed) == pytest.approx((10 + flops / (rate * 1e6)) / 1e3)
    assert "tf32" in driver


def test_precision_is_calibrated_by_the_traces_own_tensor_core_gemms(tmp_path):
    dims = [[4096, 4096], [4096, 4096]]
    flops = 2 * 4096 ** 3

    def step(b, s):
        # a bf16 GEMM reaching 400 TFLOP/s, then the fp32 one
        launch(b, s, TC_GEMM, flops / 400e6, types=("c10::BFloat16",), dims=dims)
        launch(b, s + 10, SIMT_GEMM, 5000.0, dims=dims)
        sync(b, s + 20, s + 17 + flops / 400e6 + 5000.0)
        return 30.0 + flops / 400e6 + 5000.0

    _, g = graph_of(tmp_path, step)
    own = 400.0 / peak_tflops("NVIDIA H200", "bf16")
    assert whatif_precision.tensor_core_tflops(g, "tf32") == pytest.approx(
        own * peak_tflops("NVIDIA H200", "tf32"))


def test_input_fix_takes_the_data_pipeline_off_the_step(tmp_path):
    def step(b, s):
        b.annotation(DATALOADER, s, 1000.0)
        launch(b, s + 1000, TC_GEMM, 300.0)
        sync(b, s + 1010, s + 1307)
        return 1310.0

    _, g = graph_of(tmp_path, step)
    assert replay(g) == pytest.approx(1.310)
    assert replay(whatif.input_fix(g)[0]) == pytest.approx(0.310)


def test_host_fix_moves_host_only_work_off_the_step(tmp_path):
    def step(b, s):
        launch(b, s, TC_GEMM, 300.0)
        sync(b, s + 10, s + 307)
        b.op("aten::cumsum", s + 310, 500.0, types=["double"])  # launches nothing
        return 820.0

    _, g = graph_of(tmp_path, step)
    assert replay(g) == pytest.approx(0.820)
    assert replay(whatif.host_fix(g)[0]) == pytest.approx(0.309)


def test_transfer_fix_copies_at_pinned_bandwidth_without_holding_the_host(tmp_path):
    def step(b, s):
        b.memcpy("HtoD", "Pageable", "Device", 10_000_000, s, 1000.0, s + 5, 990.0)
        launch(b, s + 1000, TC_GEMM, 100.0)
        sync(b, s + 1010, s + 1107)
        return 1110.0

    _, g = graph_of(tmp_path, step)
    assert replay(g) == pytest.approx(1.110)
    changed, _ = whatif.transfer_fix(g)
    # 10 MB at 55 GB/s = 181.8 µs from t+5; the GEMM waits for it: 5 + 181.8 + 100 + 2 + 1 µs
    assert replay(changed) == pytest.approx((5 + 1e4 / 55 + 100 + 2 + 1) / 1e3)


def test_launch_fix_replays_the_kernels_from_agraph_of(tmp_path):
    def step(b, s):
        for i in range(10):  # 20 µs of dispatch per 3 µs GEMM (nothing to fuse)
            ext = b.op("aten::mm", s + 20 * i, 20.0, types=["c10::BFloat16"])
            b.kernel(TC_GEMM, s + 20 * i + 10, s + 20 * i + 15, 3.0, ext=ext, launch_dur=8.0)
        return 200.0

    _, g = graph_of(tmp_path, step)
    assert replay(g) == pytest.approx(0.200)
    changed, _ = whatif.launch_fix(g)
    # one graph launch per step, kernels back to back at 3 µs + the node spacing: the GPU's
    # 10 kernels per step set the pace after the first graph launch and its node latency
    node, first = thresholds.GRAPH_NODE_US, thresholds.GRAPH_LAUNCH_US
    assert replay(changed) == pytest.approx(
        (first + node + 10 * (3 + node) * STEPS) / STEPS / 1e3)


def test_launch_fix_also_fuses_short_kernels_as_compile_does(tmp_path):
    def step(b, s):
        # a 3 µs GEMM, then a chain of four short elementwise kernels (3, 3, 4, 5 µs): too
        # short for the memory finding, but the compiled graph fuses them into one
        ext = b.op("aten::mm", s, 20.0, types=["c10::BFloat16"])
        b.kernel(TC_GEMM, s + 10, s + 15, 3.0, ext=ext, launch_dur=8.0)
        for i, d in enumerate((3.0, 3.0, 4.0, 5.0), start=1):
            ext = b.op("aten::add", s + 20 * i, 20.0, types=["float"])
            b.kernel(ELEMENTWISE, s + 20 * i + 10, s + 20 * i + 15, d, ext=ext, launch_dur=8.0)
        return 100.0

    _, g = graph_of(tmp_path, step)
    assert whatif.memory_fix(g)[1] == "no chain of memory-bound kernels to fuse"
    changed, driver = whatif.launch_fix(g)
    assert "3 memory-bound kernels per step fused" in driver
    # fused: the lightest member's 3 µs + each member's time beyond it (0 + 0 + 1 + 2) = 6 µs;
    # per step one GEMM and one fused kernel (9.6 µs with the node spacing) behind the graph
    # launch (15 µs), which now paces the step: the last step's two kernels end the replay
    node, first = thresholds.GRAPH_NODE_US, thresholds.GRAPH_LAUNCH_US
    assert replay(changed) == pytest.approx(
        (STEPS * first + node + (3 + node) + (6 + node)) / STEPS / 1e3)


def test_one_fused_kernel_replaces_at_most_the_compilers_fusion_limit(tmp_path):
    def step(b, s):
        for i in range(70):
            launch(b, s + 10 * i, ELEMENTWISE, 20.0, types=("float",), op="aten::add",
                    op_dur=10.0)
        return 710.0

    _, g = graph_of(tmp_path, step)
    cap = thresholds.FUSION_MAX_KERNELS
    assert [len(r) for r in fusion.chains(g, 0.0)] == [cap, 70 - cap] * STEPS


def test_a_reduction_ends_a_fused_chain_only_at_the_second_one(tmp_path):
    def step(b, s):
        # pointwise, reduction, pointwise, reduction, pointwise, each 20 µs: the compiler
        # fuses the first reduction with the ops around it and starts again at the second
        names = [ELEMENTWISE, REDUCE, ELEMENTWISE, REDUCE, ELEMENTWISE]
        for i, name in enumerate(names):
            launch(b, s + 10 * i, name, 20.0, types=("float",), op="aten::add", op_dur=10.0)
        return 120.0

    _, g = graph_of(tmp_path, step)
    runs = fusion.chains(g, thresholds.MEMORY_MIN_KERNEL_US)
    assert [len(r) for r in runs] == [3, 2] * STEPS


def test_a_step_that_syncs_is_graphed_only_after_its_syncs_go(tmp_path):
    def step(b, s):
        for i in range(10):
            ext = b.op("aten::mm", s + 20 * i, 20.0, types=["c10::BFloat16"])
            b.kernel(TC_GEMM, s + 20 * i + 10, s + 20 * i + 15, 3.0, ext=ext, launch_dur=8.0)
        sync(b, s + 200, s + 203)  # a `.item()` in the middle of the step
        return 210.0

    _, g = graph_of(tmp_path, step)
    changed, driver = whatif.launch_fix(g)
    assert driver.startswith("after its 1 host waits per step are removed")
    # the same replay as graphing the sync-free step: no wait is left in the graph
    unsynced, _ = whatif.sync_fix(g)
    node, first = thresholds.GRAPH_NODE_US, thresholds.GRAPH_LAUNCH_US
    assert replay(changed) == pytest.approx(replay(whatif.launch_fix(unsynced)[0]))
    assert replay(changed) == pytest.approx(
        (first + node + 10 * (3 + node) * STEPS) / STEPS / 1e3)
    p = whatif.predictions(g, 0.210)["launch"]
    assert p.requires == "sync" and whatif.predictions(unsynced, 0.210)["launch"].requires == ""


def test_a_pageable_copys_own_stream_sync_goes_with_the_copy(tmp_path):
    def step(b, s):
        # cudaMemcpyAsync from pageable memory, then the stream sync that makes it blocking
        b.memcpy("HtoD", "Pageable", "Device", 10_000_000, s, 5.0, s + 5, 990.0)
        sync(b, s + 5, s + 995)
        launch(b, s + 1000, TC_GEMM, 100.0)
        return 1110.0

    _, g = graph_of(tmp_path, step)
    changed, _ = whatif.transfer_fix(g)
    copy_us = 1e4 / 55  # 10 MB at the H200's pinned 55 GB/s
    # the host no longer waits: each step's copy and GEMM run back to back on the GPU
    assert replay(changed) == pytest.approx(
        (5 + STEPS * (copy_us + 100) + 2) / STEPS / 1e3, rel=0.05)
    assert replay(changed) < (1110 - 990 + copy_us + 10) / 1e3


def test_memory_fix_fuses_a_chain_into_one_kernel(tmp_path):
    def step(b, s):
        for i in range(5):
            launch(b, s + 10 * i, ELEMENTWISE, 100.0, types=("float",), op="aten::add",
                    op_dur=10.0)
        sync(b, s + 50, s + 507)
        return 510.0

    _, g = graph_of(tmp_path, step)
    assert replay(g) == pytest.approx(0.510)
    changed, driver = whatif.memory_fix(g)
    # one 100 µs kernel; the four fused-away ops are no longer dispatched
    assert replay(changed) == pytest.approx(0.110)
    assert driver.startswith("4 memory-bound kernels per step")


def _sync_drains_the_queue(b, s):
    """Per group: 20 short GEMMs launched 10 µs apart (nothing a compiler fuses), a 200 µs
    kernel, `.item()` (a 4-byte read-back and a sync), 30 µs of Python using the value. After
    each sync the queue is empty, so the short kernels run as fast as the host launches them:
    launch gaps."""
    t = s
    for _ in range(6):
        for _ in range(20):
            launch(b, t, TC_GEMM, 5.0, types=("c10::BFloat16",), op="aten::mm", op_dur=10.0)
            t += 10
        launch(b, t, TC_GEMM, 200.0, types=("c10::BFloat16",))  # runs t+7 .. t+207
        ext = b.op("aten::_local_scalar_dense", t + 10, 205.0)
        b.memcpy("DtoH", "Device", "Pageable", 4, t + 12, 5.0, t + 207, 2.0, ext=ext)
        sync(b, t + 17, t + 209)
        t += 211 + 30
    return t - s


def test_a_sync_that_causes_launch_gaps_is_the_verdict_not_the_launch_symptom(tmp_path,
                                                                              monkeypatch):
    a, g = graph_of(tmp_path, _sync_drains_the_queue)
    gaps = a.gaps.groupby("cause")["dur_us"].sum()
    assert gaps["launch"] > 2 * gaps["sync"]  # the symptom: most idle time is launch gaps
    advice = advise(a)
    assert advice.verdict.category == "sync"
    gains = {f.category: f.expected_gain_pct for f in advice.findings}
    assert gains["sync"] > gains["launch"] > 0
    # removing the syncs keeps the queue full: the GPU's 302 µs per group set the pace
    period = 6 * 441.0
    sync = whatif.predictions(g, a.real.step_ms)["sync"]
    assert sync.predicted_step_ms == pytest.approx(6 * 302 / 1e3, rel=0.02)
    assert sync.gain_pct == pytest.approx(100 * (1 - 6 * 302 / period), abs=1.5)
    # without the what-if model the idle-time pricing names the symptom
    monkeypatch.setattr("jupyter_gpuprof.advice.rules.predictions_for", lambda *_: {})
    assert advise(a).verdict.category == "launch"


def test_a_long_trace_keeps_only_its_first_whole_steps(tmp_path, monkeypatch):
    monkeypatch.setattr("jupyter_gpuprof.analysis.step_graph.MAX_ITEMS", 25)

    _, g = graph_of(tmp_path, ten_adds)
    assert g.n_steps == 2 and len(g.host) == 20  # 2 steps of 10 items fit in 25
    assert replay(g) == pytest.approx(0.200) and g.profiled_step_ms == pytest.approx(0.200)


def _finding(category, gain, **data):
    from jupyter_gpuprof.advice.findings import Finding
    return Finding(f"{category}-x", category, category, "", "", 1.0, gain, dict(data))


def test_the_fix_a_larger_one_needs_first_leads_when_the_larger_adds_little():
    from jupyter_gpuprof.advice.findings import Verdict
    from jupyter_gpuprof.advice.verdict import Advice, checked, root_cause_first

    m = thresholds.PREREQUISITE_MARGIN_PCT
    launch, sync, memory = (_finding("launch", 30.0, requires="sync"),
                            _finding("sync", 30.0 - m + 0.5), _finding("memory", 10.0))
    assert root_cause_first([launch, sync, memory]) == [sync, launch, memory]
    big = _finding("launch", 30.0 + m, requires="sync")
    assert root_cause_first([big, _finding("sync", 30.0)])[0] is big  # graphs add enough
    assert root_cause_first([_finding("launch", 30.0), sync])[0].category == "launch"
    v = checked(Advice(Verdict("sync", "", "high", []), [launch, sync, memory])).verdict
    assert any(r.startswith("sync first: launch") for r in v.reasons)


def test_the_sync_case_is_a_sync_verdict(tmp_path):
    # the sync-drains-the-queue step: removing the syncs lets the queue fill; a graph after
    # that adds nothing, and the launch finding says the syncs go first
    a, _ = graph_of(tmp_path, _sync_drains_the_queue)
    advice = advise(a)
    launch = next(f for f in advice.findings if f.category == "launch")
    assert launch.data["requires"] == "sync"
    assert launch.fix.startswith("# first take the step's syncs out")
    # the fix names the waits itself, whether or not a sync finding is shown beside it
    first = launch.fix.splitlines()[0]
    caller = a.syncs["caller"].where(a.syncs["caller"] != "", a.syncs["api"]).mode()[0]
    assert f"{caller} ×" in first and "/step" in first and "sync finding" not in launch.fix
    assert advice.verdict.category == "sync"
