"""Graphing the model removes the dispatch ahead of its graphed launches, but not the part of
it spent inside a module Dynamo leaves eager: an LSTM's backward that ends just before the
next graphed launch keeps its host time (the word LM: 0.93 ms a profiled step had been
priced away with the embedding's backward launch that follows it)."""

import pytest
from scenarios import TC_GEMM, _gemm
from tracebuilder import TraceBuilder

from jupyter_gpuprof.advice import whatif
from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

STEPS = 3
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>"


def _graph(tmp_path, middle: str):
    """Steps in one forward range: a GEMM, then `middle` (800 µs of host time that launches
    one kernel at its start), then a second GEMM launched right after it."""
    b = TraceBuilder()
    s = 0.0
    for n in range(STEPS):
        b.annotation("forward", s, 1000.0)
        _gemm(b, s + 1, s + 9, 20.0)
        ext = b.op(middle, s + 20, 800.0, types=["float"])
        b.kernel(ELEMENTWISE, s + 22, s + 29, 5.0, ext=ext)
        _gemm(b, s + 830, s + 838, 20.0)
        b.step(n + 1, s, 1000.0)
        s += 1000.0
    return analyze(load_trace(b.write(tmp_path / "t.json.gz"))).graph


def _after_middle(g):
    """The second GEMM's launch items, one a step."""
    host = g.host
    gemm = host["gpu"].map(lambda j: j >= 0 and g.gpu["name"].iloc[j] == TC_GEMM)
    return host.index[gemm.to_numpy(dtype=bool)][1::2]


def test_dispatch_inside_an_untraced_module_stays_when_the_next_launch_is_graphed(tmp_path):
    g = _graph(tmp_path, "aten::lstm")
    rows = _after_middle(g)
    kept = g.host.loc[rows, "pre_eager_dispatch_us"]
    assert (kept > 700).all() and (kept <= g.host.loc[rows, "pre_dispatch_us"]).all()
    changed, _ = whatif.launch_fix(g)
    assert changed.host.loc[rows, "pre_dispatch_us"].tolist() == pytest.approx(kept.tolist())


def test_dispatch_of_traced_ops_ahead_of_a_graphed_launch_goes(tmp_path):
    g = _graph(tmp_path, "aten::layer_norm")
    rows = _after_middle(g)
    assert (g.host.loc[rows, "pre_eager_dispatch_us"] == 0).all()
    assert (g.host.loc[rows, "pre_dispatch_us"] > 700).all()
    changed, _ = whatif.launch_fix(g)
    assert (changed.host.loc[rows, "pre_dispatch_us"] == 0).all()
