"""The summary's operator and kernel tables: each row carries every figure a view shows, so
calls are per step, shares of GPU time and of the step are decided here and every view only
formats them."""

from __future__ import annotations

import msgspec

from .model_base import Model


class OpShape(Model):
    """One input-shape list of an op and how often it was called with it (`op_links`)."""

    input_dims: str
    calls: int  # over the profiled steps
    calls_per_step: float
    cuda_self_ms_per_step: float
    pct_of_gpu: float | None  # its own GPU time as a share of all GPU time


class OpKernel(Model):
    """A kernel an op launched (`op_links.op_kernels`): full and short name, per step."""

    name: str
    short_name: str
    calls_per_step: float
    ms_per_step: float


class OpRow(Model):
    """One operator: totals over the profiled steps (`analysis.ops.OP_COLUMNS`) and the same
    per real step, per call and as a share of the step (`analysis.ops.PER_STEP_COLUMNS`)."""

    name: str
    calls: int
    cpu_total_us: float
    cpu_self_us: float
    cuda_total_us: float
    cuda_self_us: float
    input_dims: str
    input_types: str
    autograd: str
    calls_per_step: float
    cuda_self_ms_per_step: float
    cuda_total_ms_per_step: float
    cpu_self_ms_per_step: float
    cuda_us_per_call: float
    cpu_us_per_call: float
    gpu_pct_of_step: float | None
    cpu_pct_of_step: float | None
    #: own GPU time as a share of all GPU time, the kernels' `pct_of_gpu` basis
    pct_of_gpu: float | None = None
    shapes: list[OpShape] = msgspec.field(default_factory=list)  # every shape, most calls first
    kernels: list[OpKernel] = msgspec.field(default_factory=list)  # what it launched, longest first


class KernelRow(Model):
    """One GPU kernel (or copy) of the profiled steps (`analysis.kernels.KERNEL_COLUMNS`)."""

    name: str
    kind: str
    tensor_core: bool
    dtype: str
    calls: int
    total_us: float
    mean_us: float
    median_us: float
    pct_of_gpu: float | None
    ms_per_step: float
    pct_of_step: float | None
    short_name: str = ""  # no return type, namespaces or template arguments
    calls_per_step: float = 0.0
    tensor_core_eligible: bool = False  # a matmul-like kind Tensor Cores can run
    grid: str = ""  # most common launch grid ("65536×1×1"), '' where the trace has none
    block: str = ""
    occupancy_pct: float | None = None  # CUPTI's estimate, where the trace has it
    ops: list[str] = msgspec.field(default_factory=list)  # the ops that launched it, most first


class KernelTable(Model):
    """How much of the kernels the summary ships: its rows and the GPU time they cover."""

    shown: int
    total: int
    covered_pct_of_gpu: float | None
    label: str  # "42 of 42 kernels, covering 100.0 % of GPU time": every view shows this


class KernelKindRow(Model):
    """GPU time of one kernel kind, with or without Tensor Cores."""

    kind: str
    tensor_core: bool
    total_us: float
    calls: int
    ms_per_step: float
    calls_per_step: float
