"""One basis for every table: totals over the profiled steps, and the same per real step.

A table summed over five profiled steps beside a header in ms per real step reads as five
times too slow. Every table of the summary therefore carries per-step columns (`*_per_step`,
real time: GPU durations divided by the step count, host times and idle rescaled to the
unprofiled step) next to its profiled totals, and the summary's `basis` says which is which.
"""

from __future__ import annotations

import pandas as pd

from ..analysis.summary import Analysis

#: what each table's plain columns are, and what its per-step columns are
TABLE_BASIS = {
    "ops": "*_us: totals over the profiled steps; *_per_step: ms per real step (host time "
           "rescaled from profiled to real); *_per_call: µs per call",
    "kernels": "total_us/mean_us: over the profiled steps; ms_per_step: ms per real step",
    "kernel_kinds": "total_us: over the profiled steps; ms_per_step: ms per real step",
    "transfers": "count/bytes/dur_us: over the trace; *_per_step: per profiled step",
    "syncs": "count: over the profiled steps; cost_ms_per_step: GPU idle they cause, ms per "
             "real step (the sync finding's cost)",
    "timeline": "µs of profiled time; profiled_scale = profiled step / real step",
}


def _n(a: Analysis) -> int:
    return max(a.n_steps, 1)


def _pct(ms: pd.Series, a: Analysis) -> pd.Series:
    return 100.0 * ms / a.real.step_ms if a.real.step_ms > 0 else ms * float("nan")


def kernels_per_step(a: Analysis) -> pd.DataFrame:
    """The kernel table with `ms_per_step` and `pct_of_step` (of the real step)."""
    k = a.kernels
    ms = k["total_us"].astype(float) / 1e3 / _n(a)
    return k.assign(ms_per_step=ms, pct_of_step=_pct(ms, a))


def kinds_per_step(a: Analysis) -> pd.DataFrame:
    """The kernel-kind table with `ms_per_step` and `calls_per_step`."""
    k = a.kinds
    return k.assign(ms_per_step=k["total_us"].astype(float) / 1e3 / _n(a),
                    calls_per_step=k["calls"].astype(float) / _n(a))


def transfers_per_step(summary: pd.DataFrame, a: Analysis) -> pd.DataFrame:
    """The transfer summary with `count_per_step` and `ms_per_step`."""
    return summary.assign(count_per_step=summary["count"].astype(float) / _n(a),
                          ms_per_step=summary["dur_us"].astype(float) / 1e3 / _n(a))


def sync_cost_ms(a: Analysis) -> float:
    """GPU idle per real step that the sync calls cause: the one sync cost every surface shows."""
    return float(a.real.idle_by_cause_ms.get("sync", 0.0))


def caller_costs(idle_after_us: pd.Series, a: Analysis) -> pd.Series:
    """Each caller's share of `sync_cost_ms`, by the GPU idle that follows its calls."""
    total = float(idle_after_us.sum())
    if total <= 0:
        return idle_after_us * 0.0
    return idle_after_us / total * sync_cost_ms(a)
