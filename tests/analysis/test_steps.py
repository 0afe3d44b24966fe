"""Which step a GPU row belongs to when the GPU runs behind the host (a GPU-bound step)."""

from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.steps import step_table
from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace

GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"


def _lagging(tmp_path):
    """Three profiled steps of 100 µs on the host, each queueing four 40 µs kernels: the GPU
    runs a step behind. The step before the capture (its launches unrecorded, as under the
    profiler's warm-up) still runs four kernels on the GPU when the first step begins, after
    that step's first launch call."""
    b = TraceBuilder()
    for k in range(4):  # the previous step's kernels: no launch event in the trace
        b._x("kernel", GEMM, 10.0 + 40 * k, 40.0, pid=0, tid=7, device=0, stream=7,
             correlation=10_000 + k)
    gpu_free = 170.0
    for n in range(3):
        s = 100.0 * n
        b.step(n + 1, s, 100.0)
        for k in range(4):
            ext = b.op("aten::mm", s + 2 + 20 * k, 15.0, types=["c10::BFloat16"])
            b.kernel(GEMM, s + 4 + 20 * k, gpu_free, 40.0, ext=ext)
            gpu_free += 40.0
    return load_trace(b.write(tmp_path / "t.json.gz"))


def test_kernels_queued_before_the_capture_are_no_steps_work(tmp_path):
    steps, _ = step_table(_lagging(tmp_path))
    # each profiled step launched four kernels: the four that ran first belong to none
    assert steps["n_kernels"].tolist() == [4, 4, 4]
    assert steps["kernel_us"].tolist() == [160.0, 160.0, 160.0]


def test_gpu_busy_is_never_longer_than_the_step(tmp_path):
    # with the previous step's kernels counted in, the GPU was "busy" 213 µs a 160 µs step
    a = analyze(_lagging(tmp_path))
    assert a.real.gpu_busy_ms * 1e3 == 160.0
    assert a.real.gpu_busy_ms <= a.real.step_ms


def test_optimizer_classes_are_read_from_the_step_ranges():
    from paths import ROOT

    from jupyter_gpuprof.analysis.steps import optimizer_classes
    from jupyter_gpuprof.analysis.trace import load_trace

    trace = load_trace(ROOT / "tests" / "data" / "corpus" / "dcgan-fake" / "trace.json.gz")
    assert optimizer_classes(trace) == ("Adam",)
