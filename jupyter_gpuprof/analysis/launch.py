"""Launch statistics: how many kernels a step launches and whether launching outpaces them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .trace import Trace

LAUNCH_APIS = frozenset({
    "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
    "cudaLaunchCooperativeKernel", "cudaGraphLaunch", "cuGraphLaunch",
    # ROCm (roctracer writes them under cuda_runtime too)
    "hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel", "hipExtModuleLaunchKernel",
    "hipLaunchCooperativeKernel", "hipGraphLaunch", "hipExtLaunchMultiKernelMultiDevice",
})
GRAPH_LAUNCH_APIS = frozenset({"cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"})
#: HolisticTraceAnalysis calls a kernel 'short' when it runs shorter than its launch call
LAUNCH_COLUMNS = {
    "kernels_per_step": "kernels launched per profiled step",
    "median_kernel_us": "median kernel duration",
    "median_launch_us": "median host time of one launch call",
    "median_launch_delay_us": "median time from launch call start to kernel start",
    "short_kernel_pct": "% of kernels that run shorter than their launch call takes",
    "launch_cpu_us_per_step": "host time in launch calls per step",
    "kernel_gpu_us_per_step": "kernel time per step",
    "graph_launches": "CUDA-graph launches (kernels inside graphs are not separately launched)",
}


def launch_stats(trace: Trace, n_steps: int) -> dict[str, float]:
    """Launch figures for the trace (keys in `LAUNCH_COLUMNS`)."""
    rt = trace.of("cuda_runtime", "cuda_driver")
    calls = rt[rt["name"].astype(str).isin(LAUNCH_APIS)]
    kernels = trace.of("kernel")
    joined = kernels.merge(
        calls[["correlation", "ts_us", "dur_us"]].rename(
            columns={"ts_us": "call_ts_us", "dur_us": "call_dur_us"}),
        on="correlation", how="inner")
    steps = max(n_steps, 1)
    graph = int(calls["name"].astype(str).isin(GRAPH_LAUNCH_APIS).sum())

    def med(x: pd.Series) -> float:
        return float(np.median(x)) if len(x) else float("nan")

    return {
        "kernels_per_step": len(kernels) / steps,
        "median_kernel_us": med(kernels["dur_us"]),
        "median_launch_us": med(calls["dur_us"]),
        "median_launch_delay_us": med(joined["ts_us"] - joined["call_ts_us"]),
        "short_kernel_pct": 100.0 * float((joined["dur_us"] < joined["call_dur_us"]).mean())
        if len(joined) else float("nan"),
        "launch_cpu_us_per_step": float(calls["dur_us"].sum()) / steps,
        "kernel_gpu_us_per_step": float(kernels["dur_us"].sum()) / steps,
        "graph_launches": graph,
    }
