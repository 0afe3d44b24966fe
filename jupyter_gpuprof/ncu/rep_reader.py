"""Read `.ncu-rep` files with NVIDIA's `ncu_report` module (no GPU, no ncu run needed).

The module comes from the `ncu-report` package (NVIDIA licence: a dependency, never vendored) or
from the ncu install's `extras/python`; it yields the same metric records the CSV reader
does, so `metrics.frame` builds the same DataFrame from either.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from ..store.temp_files import temp_prefix  # a killed reader's copy is swept at start-up
from .driver import ENV_NCU
from .errors import NcuReportError
from .readers import RULE_COLUMNS

_TYPES = {0: "", 1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
_SPEEDUP = {0: "", 1: "local", 2: "global"}


def import_ncu_report(ncu_path: str | None = None) -> Any:
    """The `ncu_report` module (installed, or from the ncu install's extras/python), or None."""
    try:
        import ncu_report  # type: ignore[import-not-found, import-untyped, unused-ignore]

        return ncu_report
    except ImportError:
        pass
    exe = ncu_path or os.environ.get(ENV_NCU) or shutil.which("ncu")
    if not exe:
        return None
    extras = Path(exe).resolve().parent / "extras" / "python"
    if not (extras / "ncu_report.py").is_file() and not (extras / "ncu_report").is_dir():
        return None
    sys.path.append(str(extras))
    try:
        import ncu_report

        return ncu_report
    except ImportError:
        return None


def report_records(
    path: str | os.PathLike[str], module: Any = None
) -> tuple[list[dict[str, float | str]], pd.DataFrame]:
    """Metric records and rule results of a `.ncu-rep` (gzipped or not) through `ncu_report`."""
    mod = module or import_ncu_report()
    if mod is None:
        raise NcuReportError(
            "the ncu_report module is not importable: pip install ncu-report, or "
            "read the CSV exports saved beside the report"
        )
    p = Path(path)
    tmp = None
    if p.suffix == ".gz":
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(), suffix=".ncu-rep")
        with os.fdopen(fd, "wb") as f:
            f.write(gzip.decompress(p.read_bytes()))
    try:
        records, rules = _walk(mod.load_report(tmp or str(p)), mod)
    except Exception as exc:  # noqa: BLE001 - the module raises its own types
        raise NcuReportError(
            f"{p}: ncu_report could not read it ({type(exc).__name__}: {exc})"
        ) from None
    finally:
        if tmp:
            os.unlink(tmp)
    if not records:
        raise NcuReportError(f"{p}: no profiled kernels in it (not an ncu report, or empty)")
    return records, rules


def _walk(ctx: Any, mod: Any) -> tuple[list[dict[str, float | str]], pd.DataFrame]:
    """Records and rule results of every profiled kernel in an ncu_report context."""
    records, rules, idx = [], [], 0
    for ri in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(ri)
        for ai in range(rng.num_actions()):
            act = rng.action_by_idx(ai)
            # Nsight's metric names: a number, else the value ncu_report gives (its text)
            rec: dict[str, float | str] = {"ID": float(idx)}
            for m in act.metric_names():
                try:
                    val = act[m].value()
                except Exception:  # noqa: BLE001 - one unreadable metric must not lose the kernel
                    continue
                rec[m] = float(val) if isinstance(val, (int, float)) else val
            rec["Kernel Name"] = act.name(mod.IAction.NameBase_DEMANGLED)
            rec["NVTX Range"] = _nvtx_names(act)
            records.append(rec)
            for d in act.rule_results_as_dicts():
                msg = d.get("rule_message") or {}
                est = d.get("speedup_estimation") or {}
                rules.append(
                    {
                        "id": idx,
                        "kernel": rec["Kernel Name"],
                        "rule": d.get("rule_identifier", ""),
                        "section": d.get("section_identifier", ""),
                        "type": _TYPES.get(int(msg.get("type", 0)), ""),
                        "title": msg.get("title", "") or "",
                        "message": re.sub(r"@\w+:[^:@]*:([^@]*)@", r"\1", msg.get("message", "")),
                        "speedup_type": _SPEEDUP.get(int(est.get("type", 0)), ""),
                        "speedup_pct": float(est["speedup"]) if "speedup" in est else math.nan,
                    }
                )
            idx += 1
    return records, pd.DataFrame(rules, columns=list(RULE_COLUMNS))


def _nvtx_names(act: Any) -> str:
    """The NVTX ranges a kernel ran in ('' when the report has no NVTX data)."""
    try:
        state = act.nvtx_state()
        names = []
        for d in state.domains():
            dom = state.domain_by_id(d)
            names += list(dom.push_pop_ranges()) + list(dom.start_end_ranges())
        return " ".join(str(n) for n in names)
    except Exception:  # noqa: BLE001 - NVTX data is optional in a report
        return ""

