"""Where a compiled model is entered: the forward pass of each step that is the model, by the
kernels it launches, whatever its size; a loss function beside it is not."""

from __future__ import annotations

from scenarios import TC_GEMM
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

STEPS = 3


def _entries(tmp_path, model_kernels: int, loss_kernels: int) -> tuple[list[int], list[int]]:
    """Per step, how many host items were taken as entries into the model, and which."""
    b = TraceBuilder()
    s = 0.0
    for n in range(STEPS):
        t = s
        for kernels in (model_kernels, loss_kernels):  # the model's forward, then the loss's
            b.annotation("forward", t, 10.0 * kernels + 5.0)
            for i in range(kernels):
                ext = b.op("aten::mm", t + 1 + 10 * i, 8.0, types=["c10::BFloat16"])
                b.kernel(TC_GEMM, t + 3 + 10 * i, t + 8 + 10 * i, 2.0, ext=ext)
            t += 10.0 * kernels + 10.0
        b.step(n + 1, s, t - s + 20.0)
        s = t + 20.0
    host = analyze(load_trace(b.write(tmp_path / "t.json.gz"))).graph.host
    per_step = [int(host.loc[host["step"] == n, "model_entry"].sum()) for n in range(STEPS)]
    return per_step, host.index[host["model_entry"]].tolist()


def test_a_model_of_one_layer_is_entered_once_a_step(tmp_path):
    per_step, where = _entries(tmp_path, model_kernels=2, loss_kernels=1)
    assert per_step == [1] * STEPS
    assert where == [0, 3, 6]  # each step's first launch: the model's, not the loss's


def test_a_loss_beside_a_big_model_is_not_an_entry(tmp_path):
    per_step, where = _entries(tmp_path, model_kernels=12, loss_kernels=2)
    assert per_step == [1] * STEPS and where == [0, 14, 28]
