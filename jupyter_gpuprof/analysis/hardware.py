"""Which GPU a trace ran on (vendor, architecture) and its peak dense throughput by dtype.

Advice and MFU depend on the architecture: a V100 has fp16 Tensor Cores but no TF32/bf16, an
MI300X has matrix cores that hipBLASLt uses in bf16. AMD writes `computeMajor` 9 for gfx90a and
gfx94x, the same figure as Hopper, so the vendor comes from `warpSize` 64 (a wavefront; every
NVIDIA GPU has 32) or the device name, never from the compute capability alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# Dense (no sparsity) peaks in TFLOP/s from the vendors' data sheets, SXM parts unless named;
# AMD figures are per device as the trace lists them (one MI250 GCD is one device).
PEAK_TFLOPS: list[tuple[str, dict[str, float]]] = [
    ("H200", {"fp8": 1979.0, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9,
              "fp64": 33.5}),
    ("H100 PCIe", {"fp8": 1513.0, "bf16": 756.0, "fp16": 756.0, "tf32": 378.0, "fp32": 51.2,
                   "fp64": 25.6}),
    ("H100", {"fp8": 1979.0, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9,
              "fp64": 33.5}),
    ("GH200", {"fp8": 1979.0, "bf16": 989.4, "fp16": 989.4, "tf32": 494.7, "fp32": 66.9,
               "fp64": 33.5}),
    ("B200", {"fp8": 4500.0, "bf16": 2250.0, "fp16": 2250.0, "tf32": 1100.0, "fp32": 75.0,
              "fp64": 37.0}),
    ("A100", {"bf16": 312.0, "fp16": 312.0, "tf32": 156.0, "fp32": 19.5, "fp64": 9.7}),
    ("L40S", {"fp8": 733.0, "bf16": 362.0, "fp16": 362.0, "tf32": 183.0, "fp32": 91.6}),
    ("L4", {"fp8": 242.0, "bf16": 121.0, "fp16": 121.0, "tf32": 60.0, "fp32": 30.3}),
    ("A10", {"bf16": 125.0, "fp16": 125.0, "tf32": 62.5, "fp32": 31.2}),
    ("V100", {"fp16": 125.0, "fp32": 15.7, "fp64": 7.8}),
    ("2080 Ti", {"fp16": 53.8, "fp32": 13.4}),  # fp16 with fp32 accumulate (what AMP uses)
    ("T4", {"fp16": 65.0, "fp32": 8.1}),
    ("MI300X", {"fp8": 2614.9, "bf16": 1307.4, "fp16": 1307.4, "tf32": 653.7, "fp32": 163.4,
                "fp64": 81.7}),
    ("MI250", {"bf16": 181.0, "fp16": 181.0, "fp32": 45.3, "fp64": 45.3}),
    ("MI210", {"bf16": 181.0, "fp16": 181.0, "fp32": 45.3, "fp64": 45.3}),
]


@dataclass(frozen=True)
class GpuArch:
    """A GPU's vendor and architecture, and the dtypes its Tensor/matrix cores run."""

    vendor: str  # "NVIDIA" | "AMD"
    family: str  # "Volta", "Turing", "Ampere", "Ada", "Hopper", "Blackwell", "CDNA2", "CDNA3"
    matrix_dtypes: tuple[str, ...]
    #: a data-sheet name for peaks when the device name is generic ("AMD Radeon Graphics")
    peak_key: str = ""

    @property
    def matrix_unit(self) -> str:
        """What the vendor calls its matrix-multiply units."""
        return "matrix cores" if self.vendor == "AMD" else "Tensor Cores"

    @property
    def has_tf32_bf16(self) -> bool:
        """Whether fp32 matmuls can move to TF32 and autocast to bf16 (Ampere and later)."""
        return "bf16" in self.matrix_dtypes


_NVIDIA = {  # computeMajor -> (family, matrix dtypes)
    7: ("Volta", ("fp16",)), 8: ("Ampere", ("fp16", "bf16", "tf32")),
    9: ("Hopper", ("fp16", "bf16", "tf32", "fp8")),
    10: ("Blackwell", ("fp16", "bf16", "tf32", "fp8")),
    12: ("Blackwell", ("fp16", "bf16", "tf32", "fp8")),
}
_AMD = {  # computeMinor under computeMajor 9 -> (family, matrix dtypes, data-sheet name)
    0: ("CDNA2", ("fp16", "bf16", "fp32"), "MI250"),
    4: ("CDNA3", ("fp16", "bf16", "tf32", "fp8"), "MI300X"),
    5: ("CDNA4", ("fp16", "bf16", "tf32", "fp8"), ""),
}


def is_amd(device: Mapping[str, object]) -> bool:
    """Whether a deviceProperties entry is an AMD GPU (64-wide wavefronts, or its name)."""
    name = str(device.get("name") or "")
    return device.get("warpSize") == 64 or "AMD" in name or "Instinct" in name


def gpu_arch(devices: Sequence[Mapping[str, object]]) -> GpuArch | None:
    """Architecture of the first GPU in a trace's deviceProperties (None when unknown)."""
    if not devices:
        return None
    dev = devices[0]
    major, minor = dev.get("computeMajor"), dev.get("computeMinor")
    if not isinstance(major, int):
        return None
    if is_amd(dev):
        family, dtypes, key = _AMD.get(minor if isinstance(minor, int) else -1,
                                       ("CDNA", ("fp16", "bf16"), ""))
        return GpuArch("AMD", family, dtypes, key)
    if (major, minor) == (7, 5):
        return GpuArch("NVIDIA", "Turing", ("fp16",))
    if (major, minor) == (8, 9):
        return GpuArch("NVIDIA", "Ada", ("fp16", "bf16", "tf32", "fp8"))
    if major in _NVIDIA:
        return GpuArch("NVIDIA", *_NVIDIA[major])
    return None


def peak_tflops(gpu_name: str | None, dtype: str, arch: GpuArch | None = None) -> float | None:
    """Peak TFLOP/s of a GPU for a dtype, or None when the GPU or dtype is unknown."""
    for name in (gpu_name, arch.peak_key if arch else None):
        if not name:
            continue
        for key, peaks in PEAK_TFLOPS:
            if key.lower() in name.lower():
                return peaks.get(dtype)
    return None


def mfu_dtype(dtype: str, arch: GpuArch | None) -> str:
    """The dtype whose peak MFU is measured against: the matmuls' own, else the GPU's 16-bit
    matrix peak (the usual MFU convention), not the fp32 vector peak."""
    if dtype:
        return dtype
    if arch is not None:
        return "bf16" if "bf16" in arch.matrix_dtypes else "fp16"
    return "fp32"


# Pinned host<->device bandwidth in GB/s as measured on such systems (PCIe Gen5 x16 for
# H100/H200 SXM boards, NVLink-C2C for Grace parts, PCIe Gen4 x16 for the rest).
HOST_LINK_GBPS: list[tuple[str, float]] = [
    ("GH200", 400.0), ("H200", 55.0), ("H100", 55.0), ("A100", 24.0), ("L40S", 24.0),
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
