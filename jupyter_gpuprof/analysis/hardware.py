"""Peak dense throughput of known GPUs by dtype, for achieved TFLOP/s and MFU."""

from __future__ import annotations

# Dense (no sparsity) peaks in TFLOP/s from the vendors' data sheets, SXM parts unless named.
PEAK_TFLOPS: list[tuple[str, dict[str, float]]] = [
    ("H200", {"fp8": 1979.0, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9,
              "fp64": 33.5}),
    ("H100 PCIe", {"fp8": 1513.0, "bf16": 756.0, "fp16": 756.0, "tf32": 378.0, "fp32": 51.2,
                   "fp64": 25.6}),
    ("H100", {"fp8": 1979.0, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9,
              "fp64": 33.5}),
    ("GH200", {"fp8": 1979.0, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9,
               "fp64": 33.5}),
    ("A100", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5, "fp64": 9.7}),
    ("L40S", {"fp8": 733.0, "bf16": 362.0, "fp16": 362.0, "tf32": 183.0, "fp32": 91.6}),
    ("L4", {"fp8": 242.0, "bf16": 121.0, "fp16": 121.0, "tf32": 60.0, "fp32": 30.3}),
    ("A10", {"bf16": 125.0, "fp16": 125.0, "tf32": 62.5, "fp32": 31.2}),
]


def peak_tflops(gpu_name: str | None, dtype: str) -> float | None:
    """Peak TFLOP/s of a GPU for a dtype, or None when the GPU or dtype is unknown."""
    if not gpu_name:
        return None
    for key, peaks in PEAK_TFLOPS:
        if key.lower() in gpu_name.lower():
            return peaks.get(dtype)
    return None
