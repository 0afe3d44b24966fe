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


# Pinned host<->device bandwidth in GB/s as measured on such systems (PCIe Gen5 x16 for
# H100/H200 SXM boards, NVLink-C2C for Grace parts, PCIe Gen4 x16 for the rest).
HOST_LINK_GBPS: list[tuple[str, float]] = [
    ("GH200", 400.0), ("H200", 50.0), ("H100", 50.0), ("A100", 24.0), ("L40S", 24.0),
    ("L4", 24.0), ("A10", 24.0),
]
#: host link of a GPU this table does not know (PCIe Gen4 x16)
DEFAULT_HOST_LINK_GBPS = 24.0


def host_link_gbps(gpu_name: str | None) -> float:
    """Pinned host<->device copy bandwidth of a GPU's host link (GB/s)."""
    for key, gbps in HOST_LINK_GBPS:
        if gpu_name and key.lower() in gpu_name.lower():
            return gbps
    return DEFAULT_HOST_LINK_GBPS
