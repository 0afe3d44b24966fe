"""Rewrite a torchrun command so that one rank runs under Nsight Compute (`run --ncu-rank R`).

Only plain `torchrun …` and `python -m torch.distributed.run …` are rewritten. torch's own
launcher parser says where the training script starts (so every launcher option, present or
future, is kept as written); the script then becomes
`--no-python PY -m jupyter_gpuprof.launcher.rank_launch --ncu-rank R … -- PY -u train.py …`,
which is what torchrun itself would have run in each rank, behind the per-rank launcher.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

LAUNCHER = "jupyter_gpuprof.launcher.rank_launch"
SUPPORTED = (
    "`torchrun [options] train.py …` or `python -m torch.distributed.run [options] train.py …`"
)
_MODE_FLAGS = frozenset({"-m", "--module", "--no-python", "--no_python"})
_PYTHON = re.compile(r"python[0-9.]*(\.exe)?")


class TorchrunError(ValueError):
    """A command --ncu-rank cannot rewrite; the message is one line saying what is supported."""


def split_launcher(cmd: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """(the launcher itself, its options and script) for a torchrun command, else None."""
    cmd = list(cmd)
    if cmd and Path(cmd[0]).name in ("torchrun", "torchrun.exe"):
        return cmd[:1], cmd[1:]
    if (
        len(cmd) >= 3
        and _PYTHON.fullmatch(Path(cmd[0]).name)
        and cmd[1:3]
        == [
            "-m",
            "torch.distributed.run",
        ]
    ):
        return cmd[:3], cmd[3:]
    return None


def _parse(args: list[str]) -> Any:
    """torchrun's own parse of its arguments, with its usage errors turned into one line."""
    try:
        from torch.distributed.run import get_args_parser
    except ImportError as e:
        raise TorchrunError(f"--ncu-rank needs torch here to read the command ({e})") from None
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            parser = get_args_parser()
            parser.prog = "torchrun"
            return parser.parse_args(args)
    except SystemExit:
        lines = err.getvalue().strip().splitlines()
        raise TorchrunError(
            f"torchrun rejects this command: {lines[-1] if lines else 'bad arguments'}"
        ) from None


def rewrite_for_ncu(
    cmd: Sequence[str], ncu_rank: int, python: str, ncu_args: str = "", ncu: str | None = None
) -> list[str]:
    """The torchrun command with rank `ncu_rank` under ncu and every other rank unchanged."""
    split = split_launcher(cmd)
    if split is None:
        first = cmd[0] if cmd else ""
        raise TorchrunError(
            f"--ncu-rank rewrites only plain torchrun commands, {SUPPORTED}; got {first!r}"
        )
    prefix, rest = split
    ns = _parse(rest)
    if ns.run_path:
        raise TorchrunError("--ncu-rank cannot use torchrun --run-path: each rank needs a process")
    tail = 1 + len(ns.training_script_args)
    options, script = rest[:-tail], rest[-tail:]
    kept = [a for a in options if a not in _MODE_FLAGS]
    if ns.no_python:
        inner = script
    elif ns.module:
        inner = [python, "-u", "-m", *script]
    else:
        inner = [python, "-u", *script]
    launcher = [python, "-m", LAUNCHER, "--ncu-rank", str(ncu_rank)]
    if ncu:
        launcher += ["--ncu", ncu]
    if ncu_args:
        launcher.append(f"--ncu-args={ncu_args}")  # `=`: a value starting with '-' stays a value
    out = [*prefix, *kept, "--no-python", *launcher, "--", *inner]
    check = _parse(out[len(prefix) :])
    if check.module or not check.no_python or check.training_script != python:
        raise TorchrunError(
            "could not rewrite the torchrun options (abbreviated -m/--no-python flags, or "
            "PET_MODULE set?): spell them out in full"
        )
    return out


def launcher_python(cmd: Sequence[str]) -> str:
    """The Python torchrun starts ranks with: $PYTHON_EXEC, `python -m`'s, torchrun's shebang."""
    if os.environ.get("PYTHON_EXEC"):
        return os.environ["PYTHON_EXEC"]
    split = split_launcher(cmd)
    if split is not None and len(split[0]) == 3:
        return split[0][0]
    exe = shutil.which(cmd[0]) if cmd else None
    if exe:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(exe, encoding="utf-8") as f:
                first = f.readline().strip()
            if first.startswith("#!"):
                interp = first[2:].split()
                if interp and _PYTHON.fullmatch(Path(interp[0]).name):
                    return interp[0]
    return sys.executable
