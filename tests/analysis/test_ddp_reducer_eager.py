"""DDP's gradient reducer stays eager under a compiled model: its autograd hooks' work inside
backward is none of the compiled graphs', so the launch fix may not replay it from one."""

from __future__ import annotations

from scenarios import TC_GEMM
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

STEPS = 3
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, MulFunctor>"


def _host(tmp_path):
    """Per step: a forward (one GEMM), then backward: a gradient GEMM in its autograd node and
    DDP's averaging kernel inside the reducer's op, in AccumulateGrad's node."""
    b = TraceBuilder()
    s = 0.0
    for n in range(STEPS):
        b.annotation("forward", s, 20.0)
        ext = b.op("aten::mm", s + 2, 10.0, types=["c10::BFloat16"])
        b.kernel(TC_GEMM, s + 4, s + 6, 3.0, ext=ext)
        b.annotation("backward", s + 30, 60.0)
        b.op("autograd::engine::evaluate_function: MmBackward0", s + 32, 20.0)
        ext = b.op("aten::mm", s + 34, 10.0, types=["c10::BFloat16"])
        b.kernel(TC_GEMM, s + 36, s + 38, 3.0, ext=ext)
        b.op("autograd::engine::evaluate_function: torch::autograd::AccumulateGrad", s + 60, 25.0)
        b.op("torch::distributed::reducer::mul_out", s + 62, 20.0)
        ext = b.op("aten::mul", s + 64, 10.0)
        b.kernel(ELEMENTWISE, s + 66, s + 68, 1.0, ext=ext)
        b.step(n + 1, s, 100.0)
        s += 120.0
    return analyze(load_trace(b.write(tmp_path / "t.json.gz"))).graph.host


def test_the_reducers_launches_stay_eager_where_backwards_own_are_graphed(tmp_path):
    host = _host(tmp_path)
    launches = host[host["gpu"] >= 0]
    per_step = launches[launches["step"] == 1]
    assert per_step["reducer"].tolist() == [False, False, True]
    assert per_step["eager"].tolist() == [False, False, True]


def test_without_a_reducer_every_backward_launch_is_graphed(tmp_path, monkeypatch):
    from jupyter_gpuprof.analysis import step_graph as sg

    monkeypatch.setattr(sg, "DDP_REDUCER_PREFIXES", ("no such op",))
    host = _host(tmp_path)
    launches = host[host["gpu"] >= 0]
    assert not launches["reducer"].any() and not launches["eager"].any()


def test_the_launch_fix_says_what_ddps_reducer_leaves_eager(tmp_path):
    """HTA's sampled DDP ranks (a public trace): the launch fix names the reducer's launches
    it leaves out of the graphs, so the price says what it does not cover."""
    import shutil
    from pathlib import Path

    from jupyter_gpuprof.report import analyze_path

    src = Path(__file__).resolve().parents[1] / "data" / "wild" / "hta" / "sampled_ranks"
    trace = shutil.copy(src / "sampled_rank-0.json.gz", tmp_path)
    launch = next(f for f in analyze_path(trace).advice.findings if f.category == "launch")
    assert "left eager (DDP's gradient reducer, whose hooks run outside" in launch.driver


def test_a_collective_inside_a_forward_pass_is_the_models_not_the_reducers(tmp_path):
    """SyncBatchNorm's all-reduce or FSDP's all-gather run inside the forward pass: they are
    the model's own, not DDP's reducer; the same collective in backward is the reducer's."""
    b = TraceBuilder()
    s = 0.0
    for n in range(STEPS):
        b.annotation("forward", s, 20.0)
        ext = b.op("c10d::allreduce_", s + 2, 10.0)
        b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", s + 4, s + 6, 3.0, ext=ext)
        b.annotation("backward", s + 30, 60.0)
        b.op("autograd::engine::evaluate_function: MmBackward0", s + 32, 40.0)
        ext = b.op("c10d::allreduce_", s + 34, 10.0)
        b.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", s + 36, s + 38, 3.0, ext=ext)
        b.step(n + 1, s, 100.0)
        s += 120.0
    host = analyze(load_trace(b.write(tmp_path / "t.json.gz"))).graph.host
    launches = host[(host["gpu"] >= 0) & (host["step"] == 1)]
    assert launches["reducer"].tolist() == [False, True]
    assert launches["eager"].tolist() == [False, True]
