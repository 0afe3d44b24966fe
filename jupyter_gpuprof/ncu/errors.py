"""Every way an Nsight Compute session fails, mapped to one line that says what to do.

ncu prints its own messages prefixed `==PROF==`, `==WARNING==` and `==ERROR==` in the same
stream as the profiled program, and exits 0 when nothing was profiled; `check_output` reads
that stream so every failure mode gets its own message (`NcuError.kind`).
"""

from __future__ import annotations

import re
from pathlib import Path

from .options import NcuOptions, describe_filter

PERM_FIX = (
    "ERR_NVGPUCTRPERM: this user may not read the GPU performance counters. Fix: run as "
    "root / with CAP_SYS_ADMIN (docker: --cap-add=SYS_ADMIN), or have an admin set the "
    "driver option NVreg_RestrictProfilingToAdminUsers=0 and reload the driver"
)
DRIVER_FIX = (
    "ncu could not connect to the CUDA driver: check that `nvidia-smi` works here (GPU "
    "visible to this container/session, driver loaded) and that the profiled code uses CUDA"
)
PUSH_POP_NOTE = "match only push/pop ranges"
APP_RC = re.compile(r"The application returned an error code \((-?\d+)\)")
PY_ERROR = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception|Interrupt)\b.*)$")


class NcuError(RuntimeError):
    """An ncu run that failed or profiled nothing; `str()` is one line saying what to do."""

    def __init__(self, kind: str, message: str, output: str = "") -> None:
        """Keep the failure kind (for callers that branch on it) and ncu's full output."""
        super().__init__(message)
        # not_found | too_old | permission | driver | no_kernels | app_error | timeout | failed
        self.kind = kind
        self.output = output


class NcuReportError(ValueError):
    """A report or export that cannot be read; the message is one line and names the file."""


def last_python_error(text: str) -> str:
    """The last `SomeError: ...` line the profiled program printed ('' if none)."""
    lines = [ln.strip() for ln in text.splitlines() if PY_ERROR.match(ln.strip())]
    return lines[-1] if lines else ""


def app_returncode(output: str) -> int | None:
    """The profiled program's non-zero exit status as ncu printed it, for a launcher to pass on."""
    m = APP_RC.search(output)
    return int(m.group(1)) if m else None


def check_output(output: str, returncode: int, report: Path, opts: NcuOptions) -> int:
    """Number of kernels profiled; raises NcuError with a one-line fix for every failure mode."""
    if "ERR_NVGPUCTRPERM" in output:
        raise NcuError("permission", PERM_FIX, output)
    if (
        re.search(
            r"failed to connect to the CUDA driver|Failed to connect to process", output, re.I
        )
        and "Connected to process" not in output
    ):
        raise NcuError("driver", DRIVER_FIX, output)
    app = APP_RC.search(output)
    if app:
        err = last_python_error(output)
        raise NcuError(
            "app_error",
            f"the profiled code failed (exit {app.group(1)})"
            + (f": {err}" if err else "")
            + "; run it without ncu first and fix that error",
            output,
        )
    if "No kernels were profiled" in output:
        if PUSH_POP_NOTE in output:
            msg = (
                "no kernels were profiled: an NVTX include ending in '/' (e.g. 'train_step/') "
                "matches only push/pop ranges, which are per thread and miss autograd's "
                "backward kernels; mark the region with torch.cuda.nvtx.range_start/range_end "
                "and name it without the '/'"
            )
        else:
            msg = (
                f"no kernels were profiled with {describe_filter(opts)}: check that the range "
                "or kernel name is spelled as in the code, that the code launches CUDA kernels, "
                "and lower --launch-skip"
            )
        raise NcuError("no_kernels", msg, output)
    if returncode != 0:
        errs = [
            ln.split("==ERROR==", 1)[1].strip() for ln in output.splitlines() if "==ERROR==" in ln
        ]
        detail = errs[-1] if errs else (last_python_error(output) or f"exit code {returncode}")
        raise NcuError("failed", f"ncu failed: {detail}", output)
    if not report.is_file():
        raise NcuError(
            "failed",
            f"ncu finished but wrote no report at {report}; its last line was: "
            f"{output.strip().splitlines()[-1] if output.strip() else '(nothing)'}",
            output,
        )
    return len(re.findall(r"==PROF== Profiling ", output)) or -1
