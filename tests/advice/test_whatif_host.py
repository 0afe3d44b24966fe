"""The host fix moves the loop's own host work off the step, never the framework's: what runs
inside backward() or the optimizer's step is no bookkeeping the loop's code can move."""

import pytest
from scenarios import TC_GEMM
from tracebuilder import TraceBuilder

from jupyter_gpuprof.advice import whatif
from jupyter_gpuprof.analysis.step_replay import replay
from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

STEPS = 4


def _graph(tmp_path, inside: str | None, loop_us: float, framework_us: float):
    """Steps of a 300 µs GEMM, a sync, then `loop_us` of host-only work in the loop's code and
    `framework_us` inside the range named `inside` (none: the loop's too)."""
    b = TraceBuilder()
    s = 0.0
    for n in range(STEPS):
        ext = b.op("aten::mm", s, 8.0, types=["c10::BFloat16"])
        b.kernel(TC_GEMM, s + 2, s + 7, 300.0, ext=ext)
        b.sync(s + 10, 300.0)  # returns as the loop goes on
        t = s + 310
        if loop_us:
            b.op("aten::cumsum", t, loop_us, types=["double"])  # launches nothing
            t += loop_us
        if framework_us:
            if inside:
                b.annotation(inside, t, framework_us)
            b.op("aten::cumsum", t, framework_us, types=["double"])
            t += framework_us
        length = t - s + 10.0
        b.step(n + 1, s, length)
        s += length
    return analyze(load_trace(b.write(tmp_path / "t.json.gz"))).graph


@pytest.mark.parametrize("inside", ["Optimizer.step#SGD.step", "backward"])
def test_host_work_inside_the_framework_stays(tmp_path, inside):
    g = _graph(tmp_path, inside, loop_us=0.0, framework_us=500.0)
    assert replay(whatif.host_fix(g)[0]) == pytest.approx(replay(g))
    g = _graph(tmp_path, None, loop_us=0.0, framework_us=500.0)  # the same work, the loop's
    assert replay(whatif.host_fix(g)[0]) < replay(g) - 0.4


def test_only_the_loops_part_of_a_stretch_moves(tmp_path):
    """400 µs of the loop's own work, 300 µs in the optimizer's step, then 10 µs of the loop's
    before the next step: the loop's 410 µs go, the optimizer's 300 stay."""
    g = _graph(tmp_path, "Optimizer.step#SGD.step", loop_us=400.0, framework_us=300.0)
    assert replay(g) - replay(whatif.host_fix(g)[0]) == pytest.approx(0.410, abs=1e-6)
