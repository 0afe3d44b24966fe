"""How the replay is reconciled with the unprofiled step: the host scale from the real step, a
host probe, or the profiler's usual inflation (`step_replay.calibrate`), on traces whose
timing follows by hand from the replay rules."""

import pytest
from scenarios import TC_GEMM
from whatif_graphs import ELEMENTWISE, graph_of, launch, ten_adds

from jupyter_gpuprof.advice import whatif
from jupyter_gpuprof.analysis.step_replay import calibrate, host_ms_per_step, predict, replay


def test_gpu_bound_step_takes_the_profilers_host_inflation_out(tmp_path):
    def step(b, s):
        # the host queues a 900 µs GEMM and 10 small ops in 110 µs and runs ahead: the GPU
        # bounds the step at any host scale
        launch(b, s, TC_GEMM, 900.0)
        for i in range(10):
            launch(b, s + 10 + 10 * i, ELEMENTWISE, 1.0, op_dur=8.0)
        return 110.0

    _, g = graph_of(tmp_path, step)
    f, _ = calibrate(g, replay(g))
    from jupyter_gpuprof.analysis.step_replay import PROFILED_HOST_SCALE
    assert f == PROFILED_HOST_SCALE  # the real step cannot tell the host speed: the prior
    # a measured host probe replaces the prior: 30 % of the trace's own host time
    from jupyter_gpuprof.analysis.step_replay import host_ms_per_step
    own = host_ms_per_step(g)
    assert own == pytest.approx(0.110, rel=0.1)
    f_probe, _ = calibrate(g, replay(g), host_probe_ms=0.3 * own)
    assert f_probe == pytest.approx(0.3)
    host_bound = graph_of(tmp_path, lambda b, s: (launch(b, s, ELEMENTWISE, 1.0), 100.0)[1])[1]
    f2, r2 = calibrate(host_bound, 0.05)  # half the profiled step: the host is half as slow
    assert r2 == pytest.approx(0.05, rel=1e-3) and 0.4 < f2 < 0.6


def test_a_host_probe_is_the_host_scale_even_where_the_real_step_could_infer_one(tmp_path):
    def step(b, s):
        # the host issues 20 ops in 1,000 µs (50 µs each) while the GPU runs a 950 µs GEMM and
        # 19 one-µs kernels: under the profiler the host just bounds the step
        launch(b, s, TC_GEMM, 950.0, op_dur=50.0)
        for i in range(1, 20):
            launch(b, s + 50 * i, ELEMENTWISE, 1.0, op_dur=50.0)
        return 1000.0

    _, g = graph_of(tmp_path, step)
    # the real step, 0.985 ms, a hair above the GPU's 0.97: bisection reads it as a host at
    # 0.985 of its profiled speed, though any host up to 0.97 would give nearly the same
    real = 0.985
    inferred, _ = calibrate(g, real)
    assert inferred == pytest.approx(0.985, rel=1e-3)
    probe = 0.5 * host_ms_per_step(g)  # measured: the host is twice as fast
    f, _ = calibrate(g, real, host_probe_ms=probe)
    assert f == pytest.approx(0.5, rel=1e-3)
    # the GEMM on Tensor Cores at once: the host at the probe's speed now bounds the step
    faster = g.with_(gpu=g.gpu.assign(dur_us=g.gpu["dur_us"].clip(upper=1.0)))
    assert predict(g, faster, real, probe) == pytest.approx(
        real / replay(g, f) * replay(faster, f))
    assert replay(faster, f) == pytest.approx(replay(faster, 0.5))
    assert predict(g, faster, real, probe) < 0.6 * predict(g, faster, real)


def test_a_probe_that_makes_the_step_longer_than_it_ran_only_bounds_the_host(tmp_path):
    """The word LM on a second H100 host: its probe (5.31 ms) replayed the step longer than
    the baseline ran it (4.82 ms). Taking the probe as the host and sharing the difference out
    over the prediction priced the step captured by hand, which the GPU alone paces, 11 %
    below its measured 1.89 ms. The probe bounds the host from above; the real step sets it."""
    def step(b, s):
        # the host issues 20 ops, 50 µs each; the GPU runs 20 kernels of 20 µs: host-bound
        for i in range(20):
            launch(b, s + 50 * i, ELEMENTWISE, 20.0, op_dur=50.0)
        return 1000.0

    _, g = graph_of(tmp_path, step)
    real = 0.5  # the host ran twice as fast as profiled
    probe = 0.8 * host_ms_per_step(g)  # the probe says 0.8: the step would take 0.8 ms
    assert replay(g, 0.8) > 1.5 * real
    f, at = calibrate(g, real, host_probe_ms=probe)
    assert f == pytest.approx(0.5, rel=0.02) and at == pytest.approx(real, rel=1e-3)
    host = g.host.assign(pre_dispatch_us=0.0, pre_host_us=0.0, pre_input_us=0.0,
                         dur_us=g.host["dur_us"] * 0.01)
    gpu_paced = g.with_(host=host)  # the host's work gone: the 20 kernels set the pace
    assert predict(g, gpu_paced, real, probe) == pytest.approx(replay(gpu_paced, f), rel=1e-3)
    assert predict(g, gpu_paced, real, probe) >= 0.4
    # a probe the real step agrees with is still the host scale
    assert calibrate(g, replay(g, 0.5), host_probe_ms=0.5 * host_ms_per_step(g))[0] == \
        pytest.approx(0.5)


def test_calibration_scales_profiled_host_time_to_the_real_step(tmp_path):
    _, g = graph_of(tmp_path, ten_adds)
    f, base = calibrate(g, 0.100)  # unprofiled, the host ran twice as fast
    assert f == pytest.approx(0.5, abs=0.01) and base == pytest.approx(0.100, rel=1e-3)
    assert predict(g, g, 0.100) == pytest.approx(0.100)
    # host-bound: halving the host halves what the host fix keeps, not the GPU's share
    assert predict(g, whatif.host_fix(g)[0], 0.100) == pytest.approx(0.100, rel=0.02)
