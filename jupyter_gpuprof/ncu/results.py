"""Nsight Compute results as one object: per-kernel metrics + our reading + Nsight's rules.

`NcuResults.kernels` is the DataFrame a `Report` exposes as `.ncu` (see `attach_ncu`): the
columns of `metrics.NCU_COLUMNS`, `rules.INTERP_COLUMNS` and, for op replay,
`target`/`op`/`recorded_kernel`/`name_match`. `load_ncu` reopens what a run stored under
`ncu/` without ncu or a GPU; the `profile_*` workflows run a session and read it back the
same way, so a fresh result and a reopened one are built by one path.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import pandas as pd

from ..advice.findings import Finding
from ..store.ncu_files import list_ncu, ncu_paths, read_info
from ..store.run import Run, open_run
from .driver import print_progress
from .errors import NcuReportError
from .metrics import attribute_targets, read_raw_csv, read_report
from .options import NcuOptions
from .readers import read_details_rules
from .rules import interpret, ncu_findings, shape_flops
from .session import (
    SessionInfo,
    StoredSession,
    capture_command,
    capture_replay,
    capture_source,
)


@dataclass
class NcuResults:
    """One profiling session: kernels (metrics + verdicts), Nsight rule results, provenance."""

    kernels: pd.DataFrame
    rules: pd.DataFrame
    info: SessionInfo = field(default_factory=SessionInfo)
    files: dict[str, Path] = field(default_factory=dict)

    def findings(self) -> list[Finding]:
        """Next steps from the kernels whose verdict leaves room to gain."""
        share = {
            int(i): float(p)
            for i, p in zip(
                self.kernels["id"],
                self.kernels.get("pct_of_gpu", pd.Series([math.nan] * len(self.kernels))),
                strict=False,
            )
        }
        return ncu_findings(self.kernels, self.kernels, share)

    def rules_for(self, kernel_id: int, types: tuple[str, ...] = ("OPT", "WRN")) -> pd.DataFrame:
        """Nsight Compute's rule results for one kernel, largest estimated speedup first."""
        r = self.rules[(self.rules["id"] == kernel_id) & self.rules["type"].isin(types)]
        return r.sort_values("speedup_pct", ascending=False, na_position="last")

    def to_text(self) -> str:
        """Plain-text panel."""
        from .panel import render_ncu_text

        return render_ncu_text(self)

    def _repr_html_(self) -> str:
        """HTML panel, readable without a kernel (IPython's rich display)."""
        from .panel import render_ncu_html

        return render_ncu_html(self)

    def __repr__(self) -> str:
        """The text panel, so a bare `_ncu` in a console reads like the notebook's."""
        return self.to_text()


def build_results(
    kernels: pd.DataFrame,
    rules: pd.DataFrame,
    info: SessionInfo | None = None,
    files: dict[str, Path] | None = None,
) -> NcuResults:
    """Add our interpretation (and shape FLOPs for replayed ops) to the metric table."""
    info = info or {}
    ops: dict[int, tuple[str, float]] = {}
    targets = {int(t["index"]): t for t in info.get("targets", [])}
    if "target" in kernels.columns:
        cols = (kernels["id"], kernels["target"], kernels["name_match"])
        for kid, tgt, match in zip(*cols, strict=True):
            t = targets.get(int(tgt))
            if t is not None:
                # shape FLOPs describe the op's own kernel, not helpers it launched beside it
                flops = (
                    shape_flops(str(t.get("op", "")), t.get("dims") or []) if match else math.nan
                )
                ops[int(kid)] = (str(t.get("op", "")), flops)
    interp = interpret(kernels, ops).drop(columns=["id", "kernel_base"])
    merged = pd.concat([kernels.reset_index(drop=True), interp.reset_index(drop=True)], axis=1)
    if targets and "target" in merged.columns:
        merged["pct_of_gpu"] = [
            float(targets[int(t)].get("pct_of_gpu", math.nan))
            if int(t) in targets and m
            else math.nan
            for t, m in zip(merged["target"], merged["name_match"], strict=False)
        ]
    return NcuResults(merged, rules, info, files or {})


def load_ncu(run: Run | str | Path, name: str | None = None) -> NcuResults:
    """Reopen a stored session (the latest when `name` is None) from its CSVs, else its report."""
    r = run if isinstance(run, Run) else open_run(run)
    names = list_ncu(r)
    if not names:
        raise NcuReportError(f"{r.path}: no Nsight Compute results stored (run %ncu first)")
    name = name or names[-1]
    paths = ncu_paths(r, name)
    info = cast(SessionInfo, read_info(r, name))  # written by session.describe
    if "raw" in paths:
        kernels = read_raw_csv(paths["raw"])
        rules = read_details_rules(paths["details"]) if "details" in paths else pd.DataFrame()
    elif "report" in paths:
        kernels, rules = read_report(paths["report"])
    else:
        raise NcuReportError(f"{r.path}: session {name!r} has neither CSV exports nor a report")
    if info.get("targets"):
        kernels = attribute_targets(kernels, info["targets"])
    return build_results(kernels, rules, info, paths)


def attach_ncu(report: Any, results: NcuResults) -> Any:
    """Expose results on a Report as `.ncu` (the DataFrame) and merge them into its next steps."""
    report.ncu = results.kernels
    report.ncu_results = results
    advice = getattr(report, "advice", None)
    if advice is not None:
        kept = [f for f in advice.findings if not f.id.startswith("ncu-")]
        advice.findings = kept + results.findings()
    return report


def read_back(stored: StoredSession) -> NcuResults:
    """Results of a session just stored, with its in-memory description (final timing)."""
    res = load_ncu(stored.run, stored.name)
    res.info = stored.info
    return res


def profile_replay(
    source: Run | str | Path,
    top: int = 3,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    python: str | None = None,
    runs_root: str | None = None,
) -> NcuResults:
    """Profile the `top` kernels of a run (or trace file) by replaying their ops under ncu."""
    return read_back(capture_replay(source, top, opts, ncu, python, runs_root))


def profile_command(
    argv: Sequence[str],
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    run: Run | None = None,
    mode: str = "script",
    cwd: str | Path | None = None,
    runs_root: str | None = None,
    code: str = "",
    session: str | None = None,
    progress: Callable[[str], None] | None = print_progress,
) -> NcuResults:
    """Run a command under ncu with the options' filter; its stored results."""
    return read_back(
        capture_command(
            argv, opts, ncu, run, mode, cwd, runs_root, code, session, progress
        )
    )


def profile_source(
    source: str,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    run: Run | None = None,
    runs_root: str | None = None,
    python: str | None = None,
) -> NcuResults:
    """Run self-contained cell code under ncu in a subprocess (mode b); its stored results."""
    return read_back(capture_source(source, opts, ncu, run, runs_root, python))
