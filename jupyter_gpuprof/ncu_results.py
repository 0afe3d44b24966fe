"""Older import path of the Nsight Compute results, kept so existing notebooks still run.

Everything lives in `jupyter_gpuprof.ncu` now; import from there.
"""

from __future__ import annotations

from .ncu import NcuResults, attach_ncu, build_results, load_ncu

__all__ = ["NcuResults", "attach_ncu", "build_results", "load_ncu"]
