"""Small traces for the what-if tests, built so each step's timing follows by hand from the
replay rules (a launch reaches the GPU 5 µs after its call starts, a sync returns 2 µs after
the GPU is done): shared by the fix and the calibration tests."""

from scenarios import STEPS, build

from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

__all__ = ["STEPS", "ELEMENTWISE", "REDUCE", "graph_of", "launch", "sync", "ten_adds"]
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>"
REDUCE = "void at::native::reduce_kernel<512, 1, ReduceOp<float, MeanOps<float, float>>>"


def graph_of(tmp_path, step, baseline_ms=None):
    """The analysis of STEPS steps, each drawn by `step(builder, start)`, and its step graph."""
    b, _ = build(step)
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


def ten_adds(b, s):
    """A 200 µs step of ten elementwise adds, each 20 µs of host (an 8 µs launch) for 3 µs of
    GPU: host-bound, so its replay follows the host-time scale."""
    for i in range(10):
        ext = b.op("aten::add", s + 20 * i, 20.0, types=["float"])
        b.kernel(ELEMENTWISE, s + 20 * i + 10, s + 20 * i + 15, 3.0, ext=ext, launch_dur=8.0)
    return 200.0
