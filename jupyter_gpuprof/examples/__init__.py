"""Runs recorded on an NVIDIA H200 that ship with the package: a real report with no GPU at hand.

`h200_fp32_linear`: four fp32 `Linear(8192, 8192)` layers, batch 4096, TF32 off (torch 2.11,
CUDA 13.0), 30 unprofiled baseline steps and 5 profiled ones; the same capture as the test data
`tests/data/real/precision`. Its verdict is `precision`.
"""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
#: the example every quickstart opens first
FP32_LINEAR = "h200_fp32_linear"


def example_run(name: str = FP32_LINEAR) -> Path:
    """The trace of a bundled example (its meta.json beside it holds the baseline), relative to
    the working directory where it can be: a report names the path it was given, and a saved
    notebook should not carry this machine's folders."""
    path = HERE / name / "trace.json.gz"
    if not path.is_file():
        known = sorted(p.name for p in HERE.iterdir() if (p / "trace.json.gz").is_file())
        raise FileNotFoundError(f"no example {name!r}; the package ships {', '.join(known)}")
    try:
        return Path(os.path.relpath(path))
    except ValueError:  # another drive (Windows)
        return path
