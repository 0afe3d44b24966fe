"""Small traces for the what-if tests, built so each step's timing follows by hand from the
replay rules (a launch reaches the GPU 5 µs after its call starts, a sync returns 2 µs after
the GPU is done): shared by the fix and the calibration tests."""

from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

STEPS = 4
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>"
REDUCE = "void at::native::reduce_kernel<512, 1, ReduceOp<float, MeanOps<float, float>>>"


def graph_of(tmp_path, step, baseline_ms=None):
    """The analysis of STEPS steps, each drawn by `step(builder, start)`, and its step graph."""
    b = TraceBuilder()
    s = 0.0
    for n in range(STEPS):
        length = step(b, s)
        b.step(n + 1, s, length)
        s += length
    a = analyze(load_trace(b.write(tmp_path / "t.json.gz")),
                [baseline_ms] * 10 if baseline_ms else None)
    return a, a.graph


def launch(b, t, name, dur, types=("float", "float"), dims=None, op="aten::mm", op_dur=8.0):
    """An op at t whose launch call starts at t+2 (5 µs) and whose kernel starts at t+7."""
    ext = b.op(op, t, op_dur, types=list(types), dims=dims)
    b.kernel(name, t + 2, t + 7, dur, ext=ext)


def sync(b, t, gpu_end):
    """A sync at t that returns 2 µs after the GPU ends."""
    b.sync(t, gpu_end + 2 - t)
