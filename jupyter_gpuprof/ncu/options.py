"""What an Nsight Compute session profiles and how: one options object for %ncu, the CLI and
the rank launcher, and the kernel filter described in words for error messages."""

from __future__ import annotations

from dataclasses import dataclass, field

#: kernels profiled when a cell or script run names no --launch-count (each is replayed ~40x)
DEFAULT_LAUNCH_COUNT = 10


@dataclass
class NcuOptions:
    """What to profile and how; defaults suit a shared GPU and a handful of kernels."""

    set_name: str = "full"
    sections: list[str] = field(default_factory=list)
    clock_control: str = "none"
    kernel_regex: str | None = None
    launch_skip: int = 0
    launch_count: int | None = None
    nvtx_include: list[str] = field(default_factory=list)
    timeout_s: float = 300.0  # 0: no limit (a whole training job on one rank)
    extra: list[str] = field(default_factory=list)


def describe_filter(opts: NcuOptions) -> str:
    """The kernel filter in words, so a 'no kernels profiled' message names what was asked."""
    parts = [f"NVTX range {e!r}" for e in opts.nvtx_include]
    if opts.kernel_regex:
        parts.append(f"kernel regex {opts.kernel_regex!r}")
    if opts.launch_skip:
        parts.append(f"skipping {opts.launch_skip} launches")
    return ", ".join(parts) or "no filter"
