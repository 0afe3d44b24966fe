"""What the run ran on (GPU, driver, CUDA, torch, Python) and its peak memory, for meta.json."""

from __future__ import annotations

import platform
import sys

from ..store.meta_blocks import EnvMeta


def _driver_version() -> str | None:
    """The NVIDIA driver version via NVML when available (torch itself does not expose it)."""
    try:
        import pynvml  # type: ignore[import-not-found,import-untyped,unused-ignore]

        pynvml.nvmlInit()
        try:
            v = pynvml.nvmlSystemGetDriverVersion()
        finally:
            pynvml.nvmlShutdown()
        return v.decode() if isinstance(v, bytes) else str(v)
    except Exception:  # noqa: BLE001 - NVML absent or unusable: the field stays empty
        return None


def collect_env() -> EnvMeta:
    """Versions and devices of this process; never initialises CUDA on a machine without it."""
    import torch

    cuda = torch.cuda.is_available()
    env: EnvMeta = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cuda_available": cuda,
        "platform": sys.platform,
        "gpu_count": torch.cuda.device_count() if cuda else 0,
        "gpu_name": None,
        "driver": None,
    }
    if cuda:
        dev = torch.cuda.current_device()
        props = torch.cuda.get_device_properties(dev)
        env.update({
            "gpu_name": props.name,
            "gpu_device": dev,
            "gpu_capability": f"{props.major}.{props.minor}",
            "gpu_total_memory_bytes": int(props.total_memory),
            "gpu_sm_count": int(props.multi_processor_count),
            "driver": _driver_version(),
        })
    return env


def reset_peak_memory() -> None:
    """Reset the allocator's peak so max_memory_allocated covers this run only."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.reset_peak_memory_stats()


def max_memory_allocated() -> int | None:
    """Peak bytes allocated by PyTorch on the current GPU since reset_peak_memory(); None on CPU."""
    import torch

    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return int(torch.cuda.max_memory_allocated())
    return None
