"""The precision fixes as transformations of the step's GPU work: fp32 matmuls on the Tensor
Cores (TF32, or bf16 autocast with its flash attention), priced from their FLOPs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import units
from ..analysis.hardware import peak_tflops
from ..analysis.step_graph import StepGraph
from . import thresholds as T
from .precision_by_gpu import Fp32Work, fp32_masks


def tensor_core_tflops(g: StepGraph, dtype: str) -> float:
    """Achievable Tensor-Core TFLOP/s for `dtype`, calibrated by the trace's own TC GEMMs."""
    peak = peak_tflops(g.gpu_name, dtype) or peak_tflops("H100", dtype) or 400.0
    tc = g.gpu[g.gpu["tensor_core"].astype(bool) & (g.gpu["flops"] > 0)
               & g.gpu["dtype"].isin(["bf16", "fp16"])]
    if len(tc) and tc["dur_us"].sum() > 0:
        own_dtype = str(tc["dtype"].mode().iloc[0])
        own_peak = peak_tflops(g.gpu_name, own_dtype) or peak
        achieved = float(tc["flops"].sum() / tc["dur_us"].sum() / 1e6)
        return peak * min(1.0, achieved / own_peak)
    return peak * T.TENSOR_CORE_EFFICIENCY


def precision_fix(g: StepGraph, dtype: str = "tf32") -> tuple[StepGraph, str]:
    """The precision fix `Fp32Work.autocast_leads` picks: bf16 autocast (`autocast_fix`), or
    the fp32 GEMMs/convs re-estimated from their FLOPs at the Tensor-Core rate of `dtype`."""
    if Fp32Work.of(g.gpu, "dur_us", g.n_steps).autocast_leads(g.arch):
        return autocast_fix(g)
    if peak_tflops(g.gpu_name, dtype) is None and peak_tflops(g.gpu_name, "fp16") is not None:
        dtype = "fp16"  # a GPU without TF32/bf16 (V100, Turing): fp16 autocast is its fix
    gpu = g.gpu.copy()
    slow = fp32_masks(gpu)["simt"]
    before, after = _simt_at(g, gpu, slow, dtype)
    return g.with_(gpu=gpu), (
        f"{int(slow.sum())} fp32 matmul kernels at {tensor_core_tflops(g, dtype):.0f} TFLOP/s "
        f"{dtype}: {units.ms(before / 1e3 / g.n_steps)} → {units.ms(after / 1e3 / g.n_steps)} "
        "per step")


def _simt_at(g: StepGraph, gpu: pd.DataFrame, slow: pd.Series, dtype: str) -> tuple[float, float]:
    """Shortens the `slow` rows of `gpu` in place to their FLOPs at the Tensor-Core rate of
    `dtype` (FLOPs from the time at the fp32 rate where shapes are missing); µs before, after."""
    rate = tensor_core_tflops(g, dtype)
    fp32_peak = peak_tflops(g.gpu_name, "fp32") or 60.0
    flops = gpu.loc[slow, "flops"].where(gpu.loc[slow, "flops"] > 0,
                                          gpu.loc[slow, "dur_us"] * 1e6 * fp32_peak
                                          * T.SIMT_EFFICIENCY)
    before = float(gpu.loc[slow, "dur_us"].sum())
    gpu.loc[slow, "dur_us"] = np.minimum(gpu.loc[slow, "dur_us"], flops / (rate * 1e6))
    return before, float(gpu.loc[slow, "dur_us"].sum())


def autocast_fix(g: StepGraph) -> tuple[StepGraph, str]:
    """bf16 autocast: TF32 matmuls at the bf16 rate (twice TF32's on Ampere and Hopper), fp32
    attention on the flash kernels (`T.FLASH_ATTENTION_SPEEDUP`), SIMT matmuls at the bf16
    Tensor-Core rate (memory-bound kernels unchanged: see `fp32_masks`)."""
    gpu = g.gpu.copy()
    m = fp32_masks(gpu)
    every = m["tf32"] | m["attention"] | m["simt"]
    before = float(gpu.loc[every, "dur_us"].sum())
    ratio = ((peak_tflops(g.gpu_name, "tf32") or 494.7)
             / (peak_tflops(g.gpu_name, "bf16") or 989.4))
    gpu.loc[m["tf32"], "dur_us"] *= ratio
    gpu.loc[m["attention"], "dur_us"] /= T.FLASH_ATTENTION_SPEEDUP
    _simt_at(g, gpu, m["simt"], "bf16")
    after = float(gpu.loc[every, "dur_us"].sum())
    n = g.n_steps
    return g.with_(gpu=gpu), (
        f"bf16 autocast: {g.per_step(float(m['tf32'].sum()))} TF32 matmul kernels per step at "
        f"the bf16 rate (×{1 / ratio:.1f}), {g.per_step(float(m['attention'].sum()))} fp32 "
        f"attention kernels on flash kernels (×{T.FLASH_ATTENTION_SPEEDUP:.0f}): "
        f"{units.ms(before / 1e3 / n)} → {units.ms(after / 1e3 / n)} per step")
