"""Nsight Compute driver: find ncu, build its command, run it with progress and a timeout,
and export a report as CSV text; `errors.check_output` turns what it printed into one line.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import NcuError, check_output
from .options import NcuOptions

ENV_NCU = "JUPYTER_GPUPROF_NCU"
#: oldest ncu accepted: start/end NVTX filters, `--print-units base` and rule results in CSV
MIN_VERSION = (2022, 1)
#: places ncu lives when it is installed but not on PATH
SEARCH_GLOBS = (
    "/usr/local/cuda/bin/ncu",
    "/usr/local/cuda-*/bin/ncu",
    "/opt/nvidia/nsight-compute/*/ncu",
    "/usr/local/NVIDIA-Nsight-Compute*/ncu",
)
INSTALL_HINT = (
    "install Nsight Compute (it ships with the CUDA toolkit, or as the nsight-compute "
    "package) and put `ncu` on PATH, or point to it with --ncu PATH or the "
    f"{ENV_NCU} environment variable"
)
_PROGRESS = re.compile(
    r'==PROF== Profiling "([^"]+)"(?:\s*-\s*(\d+))?:?\s*([0-9%. ]*?)'
    r"(?:\s*-\s*(\d+)\s*pass(?:es)?)?\s*$"
)
_VERSION = re.compile(r"Version\s+(\d+)\.(\d+)(?:\.(\d+))?")


@dataclass
class NcuResult:
    """A finished ncu run: its report file and everything it printed."""

    report: Path
    output: str
    returncode: int
    seconds: float
    kernels_profiled: int


def find_ncu(explicit: str | None = None) -> str:
    """Path of ncu: --ncu PATH, then $JUPYTER_GPUPROF_NCU, PATH, the usual install folders."""
    for cand, origin in ((explicit, "--ncu"), (os.environ.get(ENV_NCU), ENV_NCU)):
        if cand:
            if Path(cand).is_dir():
                cand = str(Path(cand) / "ncu")
            if Path(cand).is_file() and os.access(cand, os.X_OK):
                return cand
            raise NcuError("not_found", f"ncu not found at {cand} (from {origin}): {INSTALL_HINT}")
    found = shutil.which("ncu")
    if found:
        return found
    import glob

    for pattern in SEARCH_GLOBS:
        hits = sorted(glob.glob(pattern), reverse=True)
        if hits:
            return hits[0]
    raise NcuError("not_found", f"ncu (Nsight Compute) not found: {INSTALL_HINT}")


def ncu_version(ncu: str) -> tuple[int, ...]:
    """Version of ncu as a tuple (e.g. (2025, 3, 1)); raises NcuError when ncu is too old."""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NcuError("not_found", f"cannot run {ncu} --version ({exc}): {INSTALL_HINT}") from None
    m = _VERSION.search(out.stdout + out.stderr)
    if not m:
        raise NcuError(
            "not_found",
            f"{ncu} does not look like Nsight Compute (no version printed): {INSTALL_HINT}",
        )
    version = tuple(int(g) for g in m.groups() if g is not None)
    if version[:2] < MIN_VERSION:
        have, need = ".".join(map(str, version)), ".".join(map(str, MIN_VERSION))
        raise NcuError(
            "too_old",
            f"ncu {have} is too old (need {need} or newer): install a current "
            "Nsight Compute and point to it with --ncu PATH or "
            f"{ENV_NCU}",
        )
    return version


def build_command(
    ncu: str, opts: NcuOptions, report_base: str | Path, argv: Sequence[str]
) -> list[str]:
    """The ncu command line that profiles `argv` into `<report_base>.ncu-rep`."""
    cmd = [
        ncu,
        "--export",
        str(report_base),
        "--force-overwrite",
        "--clock-control",
        opts.clock_control,
        "--target-processes",
        "all",
    ]
    if opts.sections:
        for s in opts.sections:
            cmd += ["--section", s]
    else:
        cmd += ["--set", opts.set_name]
    if opts.nvtx_include:
        cmd.append("--nvtx")
        for expr in opts.nvtx_include:
            cmd += ["--nvtx-include", expr]
    if opts.kernel_regex:
        cmd += ["--kernel-name-base", "function", "--kernel-name", f"regex:{opts.kernel_regex}"]
    if opts.launch_skip:
        cmd += ["--launch-skip", str(opts.launch_skip)]
    if opts.launch_count:
        cmd += ["--launch-count", str(opts.launch_count)]
    return cmd + list(opts.extra) + list(argv)


def _kill(proc: subprocess.Popen[str]) -> None:
    """Stop ncu and everything it started (it runs in its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=5)
    except (ProcessLookupError, subprocess.TimeoutExpired, PermissionError):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def print_progress(line: str) -> None:
    """Default progress sink: ncu's per-kernel replay lines, shown as they come."""
    m = _PROGRESS.search(line)
    if m:
        idx = f"kernel {int(m.group(2)) + 1}: " if m.group(2) else ""
        passes = f" ({m.group(4)} replay passes)" if m.group(4) else ""
        print(f"ncu: profiled {idx}{m.group(1)[:70]}{passes}", file=sys.stdout, flush=True)
    elif line.startswith("==ERROR==") or line.startswith("==WARNING== No kernels"):
        print(line.rstrip(), file=sys.stdout, flush=True)


def run_ncu(
    cmd: Sequence[str],
    report: Path,
    opts: NcuOptions,
    cwd: str | Path | None = None,
    env: dict[str, str] | None = None,
    progress: Callable[[str], None] | None = print_progress,
) -> NcuResult:
    """Run an ncu command to completion (or its timeout) and check what it printed."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(cmd),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            cwd=cwd,
            env=env,
            start_new_session=True,
            bufsize=1,
        )
    except FileNotFoundError:
        raise NcuError("not_found", f"cannot start {cmd[0]}: {INSTALL_HINT}") from None
    lines: list[str] = []

    def pump() -> None:
        """Collect ncu's output as it comes, so progress shows and nothing blocks the pipe."""
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if progress:
                progress(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=opts.timeout_s or None)
    except subprocess.TimeoutExpired:
        _kill(proc)
        reader.join(timeout=5)
        done = sum(1 for ln in lines if "==PROF== Profiling" in ln and "100%" in ln)
        raise NcuError(
            "timeout",
            f"ncu did not finish within {opts.timeout_s:.0f} s ({done} kernels "
            "done): profile fewer kernels (--top, --launch-count, a narrower NVTX range) "
            "or a lighter --set (basic), or raise --timeout",
            "".join(lines),
        ) from None
    except BaseException:
        _kill(proc)  # KeyboardInterrupt in the notebook must not leave ncu replaying
        raise
    reader.join(timeout=10)
    output = "".join(lines)
    n = check_output(output, proc.returncode, report, opts)
    return NcuResult(report, output, proc.returncode, time.monotonic() - start, n)


def export_csv(ncu: str, report: Path, page: str = "raw", timeout_s: float = 300.0) -> str:
    """`ncu --import R --csv --page raw|details --print-units base` as text (never the live CSV)."""
    cmd = [ncu, "--import", str(report), "--csv", "--page", page, "--print-units", "base"]
    if page == "details":
        cmd += ["--print-details", "all"]
    out = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout_s)
    if out.returncode != 0 and page == "details":  # older ncu without --print-details
        out = subprocess.run(
            cmd[:-2], capture_output=True, text=True, errors="replace", timeout=timeout_s
        )
    if out.returncode != 0:
        err = (out.stderr or out.stdout).strip().splitlines()
        raise NcuError(
            "failed", f"ncu --import {report.name} failed: {err[-1] if err else out.returncode}"
        )
    return out.stdout
