"""Synthetic traces, one per verdict category, whose bottleneck is known by construction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tracebuilder import TraceBuilder

STEPS = 4
BF16 = ["c10::BFloat16", "c10::BFloat16"]
TC_GEMM = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
SIMT_GEMM = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(Params)"
DATALOADER = "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"


def _gemm(b: TraceBuilder, t: float, run_at: float, dur: float, name: str = TC_GEMM,
          types: list[str] = BF16) -> None:
    ext = b.op("aten::mm", t, 8.0, types=types)
    b.kernel(name, t + 2.0, run_at, dur, ext=ext)


def wait_for_gpu(b: TraceBuilder, s: float, ts: float, gpu_end: float) -> float:
    """The host blocks until the GPU is done (as `loss.item()` at the end of a step does) and
    the step ends right after: a GPU-bound step, not a host busy for as long as the GPU."""
    b.sync(s + ts, gpu_end - ts + 2.0)
    return gpu_end + 10.0


def precision(b: TraceBuilder, s: float) -> float:
    _gemm(b, s + 10, s + 100, 9000.0, SIMT_GEMM, ["float", "float"])
    return wait_for_gpu(b, s, 30.0, 9100.0)


TF32_GEMM = "sm90_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x32_warpgroupsize1x1x1"


def tf32(b: TraceBuilder, s: float) -> float:
    """fp32 matmuls on TF32 Tensor Cores (8 ms), fp32 activations around them (1 ms)."""
    _gemm(b, s + 10, s + 100, 8000.0, TF32_GEMM, ["float", "float"])
    ext = b.op("aten::gelu", s + 20, 1.0, types=["float"])
    b.kernel("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl<float>>",
             s + 21, s + 8100, 1000.0, ext=ext)
    return wait_for_gpu(b, s, 30.0, 9100.0)


MEM_EFF_ATTENTION = ("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::"
                     "AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>"
                     "::Params)")


def tf32_attention(b: TraceBuilder, s: float) -> float:
    """nanoGPT's fp32 step with TF32 on: TF32 GEMMs (4 ms), SDPA on its fp32 memory-efficient
    kernel (4 ms), one small GEMM that misses the Tensor Cores (0.2 ms), fp32 gelu (1 ms)."""
    _gemm(b, s + 10, s + 100, 4000.0, TF32_GEMM, ["float", "float"])
    ext = b.op("aten::_efficient_attention_forward", s + 20, 2.0, types=["float", "float"])
    b.kernel(MEM_EFF_ATTENTION, s + 22, s + 4100, 4000.0, ext=ext)
    _gemm(b, s + 30, s + 8100, 200.0, SIMT_GEMM, ["float", "float"])
    ext = b.op("aten::gelu", s + 40, 1.0, types=["float"])
    b.kernel("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl<float>>",
             s + 41, s + 8300, 1000.0, ext=ext)
    return wait_for_gpu(b, s, 50.0, 9300.0)


def compute(b: TraceBuilder, s: float) -> float:
    _gemm(b, s + 10, s + 100, 9500.0)
    return wait_for_gpu(b, s, 30.0, 9600.0)


def memory(b: TraceBuilder, s: float) -> float:
    for i in range(90):
        ext = b.op("aten::add", s + 1 + i, 0.8, types=["c10::BFloat16"])
        b.kernel("void at::native::vectorized_elementwise_kernel<4, CUDAFunctor_add<bf16>>",
                 s + 1.2 + i, s + 100 + 100 * i, 100.0, ext=ext, launch_dur=0.5)
    return wait_for_gpu(b, s, 95.0, 9100.0)


def input_bound(b: TraceBuilder, s: float) -> float:
    b.annotation(DATALOADER, s, 7000.0)
    _gemm(b, s + 7010, s + 7100, 2000.0)
    return 10_000.0


def sync(b: TraceBuilder, s: float) -> float:
    t = s + 10
    for _ in range(20):
        ext = b.op("aten::mm", t - 5, 12.0, types=BF16)
        b.kernel(TC_GEMM, t, t + 10, 200.0, ext=ext)
        b.sync(t + 8, 204.0)
        t += 360
    return 7500.0


def launch(b: TraceBuilder, s: float) -> float:
    # 300 tiny ops of a small MLP, a GEMM then its activation: nothing a compiler fuses (a
    # GEMM ends every chain), each launched slower than it runs
    t = s
    for i in range(300):
        op, kernel = (("aten::mm", TC_GEMM) if i % 2 == 0 else
                      ("aten::add", "void at::native::vectorized_elementwise_kernel<4, add>"))
        ext = b.op(op, t, 20.0, types=["c10::BFloat16"])
        b.kernel(kernel, t + 10, t + 20, 3.0, ext=ext, launch_dur=8.0)
        t += 20
    return 6100.0


def host(b: TraceBuilder, s: float) -> float:
    _gemm(b, s + 10, s + 100, 2000.0)
    b.op("aten::cumsum", s + 2100, 5900.0, types=["double"])  # CPU math, launches nothing
    return 10_000.0


def transfer(b: TraceBuilder, s: float) -> float:
    # 120 MB from pageable memory at 20 GB/s, then the step's GEMM
    b.memcpy("HtoD", "Pageable", "Device", 120_000_000, s + 10, 6000.0, s + 20, 5980.0)
    _gemm(b, s + 6020, s + 6100, 1000.0)
    return wait_for_gpu(b, s, 6030.0, 7100.0)


def comm(b: TraceBuilder, s: float,
         name: str = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL") -> float:
    _gemm(b, s + 10, s + 100, 4000.0)
    b.kernel(name, s + 30, s + 4100, 5000.0, stream=20)
    return wait_for_gpu(b, s, 40.0, 9100.0)


def comm_old_names(b: TraceBuilder, s: float) -> float:
    return comm(b, s, "ncclKernel_AllReduce_RING_LL_Sum_bfloat16")


SCENARIOS: dict[str, Callable[[TraceBuilder, float], float]] = {
    "precision": precision, "compute": compute, "memory": memory, "input": input_bound,
    "sync": sync, "launch": launch, "host": host, "transfer": transfer, "comm": comm,
}


def build(step: Callable[[TraceBuilder, float], float]) -> tuple[TraceBuilder, float]:
    """A trace of `STEPS` steps of the scenario; returns it and the step length in ms."""
    b = TraceBuilder()
    s = 0.0
    for n in range(STEPS):
        length = step(b, s)
        b.step(n + 1, s, length)
        s += length
    return b, length / 1e3


def scenario_analysis(tmp_path: Any, step: Callable[[TraceBuilder, float], float],
                      baseline_ms: float | list[float] | None = None,
                      stalls: list[dict[str, Any]] | None = None,
                      loader: Any = None) -> Any:
    """The analysis of a scenario's trace, reconciled with a baseline of its own step time (or
    the given baseline steps, with the stall events the capture stamped on them and the
    baseline's waits for data, a LoaderPace)."""
    from jupyter_gpuprof.analysis.summary import analyze
    from jupyter_gpuprof.analysis.trace import load_trace

    b, step_ms = build(step)
    trace = load_trace(b.write(tmp_path / "t.json.gz"))
    steps = baseline_ms if isinstance(baseline_ms, list) else [baseline_ms or step_ms] * 10
    return analyze(trace, steps, stalls=stalls, loader=loader)
