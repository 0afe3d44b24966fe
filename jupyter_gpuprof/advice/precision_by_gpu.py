"""What "use the Tensor Cores" means on the GPU the trace ran on: its words and its code.

A V100 or Turing card has fp16 Tensor Cores only (no TF32, no bf16), so its fix is fp16 autocast
with a GradScaler; AMD Instinct GPUs have matrix cores that hipBLASLt drives in bf16; Ampere and
later take TF32 for fp32 matmuls or bf16 autocast.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..analysis.hardware import GpuArch
from . import fixes
from . import thresholds as T

#: matmul kinds whose fp32 kernels a precision fix speeds up from their FLOPs
MATMUL_FIXABLE = ("gemm", "conv")

FP16_AMP = """\
scaler = torch.cuda.amp.GradScaler()                 # fp16 needs loss scaling; bf16 and TF32
with torch.autocast("cuda", dtype=torch.float16):   # are not available on this GPU
    loss = loss_fn(model(x), y)
scaler.scale(loss).backward()
scaler.step(opt)
scaler.update()"""

AMD_BF16 = """\
with torch.autocast("cuda", dtype=torch.bfloat16):   # bf16 matrix cores (hipBLASLt)
    loss = loss_fn(model(x), y)"""


def precision_advice(arch: GpuArch | None, host_paced: bool = False) -> tuple[str, str]:
    """(what runs these faster, the fix's code) for the trace's GPU; `host_paced`: the host
    sets the pace of the step once the matmuls are fast (`host_paces_after`), so the fix is
    TF32 alone, which adds no kernel, not autocast, whose casts the host would issue."""
    if arch is not None and not arch.has_tf32_bf16:
        return (f"fp16 Tensor Cores (this {arch.family} GPU has no TF32 or bf16) run these",
                FP16_AMP)
    if arch is not None and arch.vendor == "AMD":
        return f"bf16 matrix cores ({arch.family}) run these", AMD_BF16
    if host_paced:
        return "TF32 Tensor Cores run these", fixes.TF32
    return "TF32/bf16 Tensor Cores run these", fixes.PRECISION


def host_paces_after(predicted_step_ms: float | None, gpu_busy_ms: float,
                     simt_ms: float) -> float | None:
    """The GPU work left (ms a step: the busy time less what `T.PRECISION_SPEEDUP` takes off
    the SIMT matmuls) where the step with its fp32 matmuls on Tensor Cores
    (`predicted_step_ms`, the what-if's) is the host's, longer than it by
    `T.HOST_PACED_MARGIN`; None where the GPU still sets the pace."""
    if predicted_step_ms is None or predicted_step_ms <= 0:
        return None
    left = max(0.0, gpu_busy_ms - simt_ms * (1.0 - 1.0 / T.PRECISION_SPEEDUP))
    return left if predicted_step_ms > left * T.HOST_PACED_MARGIN else None


def fp32_masks(df: pd.DataFrame) -> dict[str, pd.Series]:
    """GPU rows by what bf16 autocast does to them: the one split of the rule and the what-if.

    `simt`: fp32 GEMMs/convs without Tensor Cores (TF32 or bf16 lifts them from their FLOPs);
    `tf32`: fp32 GEMMs/convs/attention already on TF32 Tensor Cores (bf16 runs at twice the
    rate); `attention`: fp32 attention without Tensor Cores (SDPA's math or memory-efficient
    kernels, which a bf16 input sends to the flash kernels); `half`: matmuls already in bf16 or
    fp16 (autocast is on: what stays fp32 is what autocast keeps there by design). fp32
    memory-bound kernels are not priced: on nanoGPT the casts autocast adds cost what the
    halved bytes save (41.5 → 43.7 ms a step of elementwise, norm, softmax and reductions).
    """
    fp32 = df["dtype"].isin(["fp32", ""])
    tc = df["tensor_core"].astype(bool)
    kind = df["kind"]
    matmul = kind.isin((*MATMUL_FIXABLE, "attention"))
    return {"simt": kind.isin(MATMUL_FIXABLE) & ~tc & fp32,
            "tf32": matmul & tc & (df["dtype"] == "fp32"),
            "attention": (kind == "attention") & ~tc & fp32,
            "half": matmul & tc & df["dtype"].isin(["bf16", "fp16"])}


@dataclass(frozen=True)
class Fp32Work:
    """ms per step of each part of `fp32_masks`, and which precision fix they call for."""

    simt: float
    tf32: float
    attention: float
    half: float

    @classmethod
    def of(cls, df: pd.DataFrame, col: str, n_steps: int) -> Fp32Work:
        """The split of a kernel table (`col` in µs) per step."""
        m = fp32_masks(df)
        n = max(n_steps, 1)
        return cls(*(float(df.loc[m[k], col].sum()) / 1e3 / n
                     for k in ("simt", "tf32", "attention", "half")))

    def autocast_leads(self, arch: GpuArch | None) -> bool:
        """bf16 autocast is the fix (not TF32): on a GPU with bf16 and a step not on it already,
        where matmuls on TF32 and fp32 attention outweigh the matmuls that miss the Tensor
        Cores."""
        has_bf16 = arch is None or arch.has_tf32_bf16
        fp32 = self.tf32 + self.attention
        return (has_bf16 and fp32 >= T.TF32_MATMUL_MIN_MS and fp32 > self.simt
                and fp32 > self.half)
