"""What "use the Tensor Cores" means on the GPU the trace ran on: its words and its code.

A V100 or Turing card has fp16 Tensor Cores only (no TF32, no bf16), so its fix is fp16 autocast
with a GradScaler; AMD Instinct GPUs have matrix cores that hipBLASLt drives in bf16; Ampere and
later take TF32 for fp32 matmuls or bf16 autocast.
"""

from __future__ import annotations

from ..analysis.hardware import GpuArch
from . import fixes

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


def precision_advice(arch: GpuArch | None) -> tuple[str, str]:
    """(what runs these faster, the fix's code) for the trace's GPU."""
    if arch is not None and not arch.has_tf32_bf16:
        return (f"fp16 Tensor Cores (this {arch.family} GPU has no TF32 or bf16) run these",
                FP16_AMP)
    if arch is not None and arch.vendor == "AMD":
        return f"bf16 matrix cores ({arch.family}) run these", AMD_BF16
    return "TF32/bf16 Tensor Cores run these", fixes.PRECISION
