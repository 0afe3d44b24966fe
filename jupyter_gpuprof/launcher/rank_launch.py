"""Per-rank launcher of `jupyter gpuprof run --ncu-rank R`: rank R runs under Nsight Compute.

torchrun starts `python -m jupyter_gpuprof.launcher.rank_launch --ncu-rank R [--ncu PATH]
[--ncu-args=…] -- CMD…` in every rank (see launcher/torchrun.py). Any other rank replaces itself
with CMD unchanged (exec: same pid, signals and exit status). Rank R runs CMD under ncu through
`ncu.profile_command` (the usual command line, ncu lookup and one-line errors), stores
the report as `<run>/ncu/rank<R>.*`, and exits with CMD's own status.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import sys
from typing import Any

from ..capture.ranks import NONE, current_rank
from ..oneline import error_line
from ..protocol import ENV_RANKS, ENV_RUN_DIR

#: ncu options that the launcher sets itself
_OURS = {"-o": "--export", "--export": "--export", "--target-processes": "--target-processes"}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # a one-line ValueError, never sys.exit in a caller
        raise ValueError(f"{self.prog}: {message}")


def _ncu_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="--ncu-args", add_help=False, allow_abbrev=False)
    p.add_argument("--set", dest="set_name", default="full")
    p.add_argument("--section", action="append", default=[])
    p.add_argument("--clock-control", default="none", choices=["none", "base"])
    p.add_argument("-k", "--kernel-name", "--kernel-regex", dest="kernel", default=None)
    p.add_argument("-s", "--launch-skip", type=int, default=0)
    p.add_argument("-c", "--launch-count", type=int, default=None)
    p.add_argument("--nvtx-include", action="append", default=[])
    p.add_argument("--nvtx", action="store_true")
    p.add_argument("-f", "--force-overwrite", action="store_true")
    return p


def parse_ncu_args(text: str | None) -> Any:
    """`--ncu-args` text -> NcuOptions: known filters become fields (so -c 10 stays the default)."""
    from ..ncu import NcuOptions

    tokens = shlex.split(text or "")
    for tok in tokens:
        name = tok.split("=", 1)[0]
        if name in _OURS:
            raise ValueError(
                f"--ncu-args: leave out {name}: the report goes to <run>/ncu/rank<R> and ncu "
                "follows the rank's child processes already"
            )
    args, extra = _ncu_parser().parse_known_args(tokens)
    regex = args.kernel
    if regex is not None:
        # ncu's `-k NAME` is an exact function name; `-k regex:R` a regular expression
        regex = regex[len("regex:") :] if regex.startswith("regex:") else f"^{re.escape(regex)}$"
    return NcuOptions(
        set_name=args.set_name,
        sections=args.section,
        clock_control=args.clock_control,
        kernel_regex=regex,
        launch_skip=args.launch_skip,
        launch_count=args.launch_count,
        nvtx_include=args.nvtx_include,
        extra=extra,
    )


def _echo(line: str) -> None:
    """Show everything the rank prints under ncu, as it would print without it."""
    sys.stdout.write(line)
    sys.stdout.flush()


def _exit_on_signal(signum: int, frame: Any) -> None:
    # torchrun stops a failed job with SIGTERM: unwind so run_ncu kills ncu's process group
    raise SystemExit(128 + signum)


def _exit_status(e: BaseException) -> int:
    """The status the rank exits with when ncu failed: the program's own when it ran."""
    from ..ncu import NcuError, app_returncode

    if isinstance(e, NcuError):
        rc = app_returncode(e.output)
        if rc is not None:
            return rc
        if e.kind in ("no_kernels", "permission"):
            return 0  # the program ran to its end; only the profile is missing
    return 1


def profile_rank(rank: int, cmd: list[str], ncu: str | None, ncu_args: str) -> int:
    """Run `cmd` under ncu for this rank and store its report in the job's run folder."""
    from ..ncu import NcuError, profile_command
    from ..store import open_run
    from ..store.ncu_files import save_ncu_error

    # no torch.profiler trace here: under ncu its timeline measures kernel replay, not training
    os.environ[ENV_RANKS] = NONE
    run_dir = os.environ.get(ENV_RUN_DIR)
    run = open_run(run_dir) if run_dir else None
    name = f"rank{rank}"
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        opts = parse_ncu_args(ncu_args)
        opts.timeout_s = 0  # the whole training runs under ncu; only torchrun may stop it
        res = profile_command(
            cmd,
            opts,
            ncu,
            run,
            mode=f"rank {rank}",
            code=shlex.join(cmd),
            session=name,
            progress=_echo,
        )
    except (NcuError, ValueError, OSError) as e:
        msg = error_line(e)
        if run is not None:
            save_ncu_error(run, name, msg)
        print(f"gpuprof: ncu on rank {rank}: {msg}", file=sys.stderr, flush=True)
        return _exit_status(e)
    where = res.files.get("report", res.files.get("info"))
    print(
        f"gpuprof: ncu on rank {rank}: {len(res.kernels)} kernels profiled -> {where}",
        file=sys.stderr,
        flush=True,
    )
    return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m jupyter_gpuprof.launcher.rank_launch",
        description="Run one rank of a torchrun job under Nsight Compute, the others unchanged.",
    )
    p.add_argument("--ncu-rank", type=int, required=True, help="global rank (RANK) to profile")
    p.add_argument("--ncu", default=None, help="path to ncu (else $JUPYTER_GPUPROF_NCU, PATH)")
    p.add_argument("--ncu-args", default="", help="ncu options, e.g. '-k regex:gemm -c 5'")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...]")
    return p


def main(argv: list[str] | None = None) -> int:
    """Exec the command in every rank but --ncu-rank; run that one under ncu."""
    args = _parser().parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else list(args.cmd)
    if not cmd:
        print("gpuprof: rank_launch: nothing to run: give a command after --", file=sys.stderr)
        return 2
    rank = current_rank()
    if rank is None:
        print("gpuprof: rank_launch runs under torchrun (no RANK set)", file=sys.stderr)
        return 2
    if rank != args.ncu_rank:
        sys.stdout.flush()
        try:
            os.execvp(cmd[0], cmd)  # untouched: the rank becomes its own command
        except OSError as e:
            print(f"gpuprof: could not start {cmd[0]}: {e.strerror or e}", file=sys.stderr)
            return 127
    return profile_rank(rank, cmd, args.ncu, args.ncu_args)


if __name__ == "__main__":
    sys.exit(main())
