"""The one-time costs finding: start-up, module loading, graph capture or allocator growth that
the profiled window holds, named and priced so no steady-state advice is drawn from them."""

from __future__ import annotations

from .. import units
from ..analysis.one_time import inside
from ..analysis.summary import Analysis
from .findings import Finding

ONE_TIME_FIX = """\
# profile the steady state, not the first steps: skip start-up and first launches
prof = torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, warmup=2, active=3), ...)
# lazy module loading (first launch of each kernel): run every shape once before profiling
# (or CUDA_MODULE_LOADING=EAGER); CUDA graphs: profile the replays, not the capture"""


def one_time_rule(a: Analysis) -> Finding | None:
    """One-time costs inside the analysed window: what part of the step they are."""
    table, w = a.one_time, a.window
    ms = inside(table, w.start_us, w.end_us) / 1e3 / max(a.n_steps, 1)
    if ms <= 0 or a.real.step_ms <= 0:
        return None
    cost = min(ms, a.real.step_ms)
    parts = table[(table["end_us"] > w.start_us) & (table["ts_us"] < w.end_us)]
    by_kind = parts.groupby("kind")["dur_us"].agg(["sum", "size"]).sort_values(
        "sum", ascending=False)
    named = "; ".join(
        f"{kind} {units.ms(row['sum'] / 1e3)} ({int(row['size'])} call(s), longest "
        f"{parts.loc[parts['kind'] == kind].nlargest(1, 'dur_us')['name'].iloc[0]})"
        for kind, row in by_kind.iterrows())
    evidence = (f"{units.ms(ms)} per step of the profiled window are one-time costs — {named}. "
                "They do not recur in the steady state; the other findings are priced on "
                "a window that contains them, so profile again after warm-up.")
    gain = 100.0 * cost / a.real.step_ms
    return Finding("one-time-costs", "one-time", "One-time costs fill the profiled window",
                   evidence, ONE_TIME_FIX, round(cost, 3), round(gain, 1),
                   {"one_time_ms_per_step": round(ms, 3),
                    "kinds": [str(k) for k in by_kind.index]})


def excluded_note(a: Analysis) -> str | None:
    """The verdict's reason naming one-time costs left out of the analysed window, if any."""
    t, w = a.one_time, a.window
    out = t[(t["end_us"] <= w.start_us) | (t["ts_us"] >= w.end_us)]
    if out.empty:
        return None
    by_kind = out.groupby("kind")["dur_us"].sum().sort_values(ascending=False)
    longest = out.nlargest(1, "dur_us").iloc[0]
    named = ", ".join(f"{k} {units.ms(v / 1e3)}" for k, v in by_kind.items())
    return (f"one-time costs before the analysed window were excluded: {named} (longest: "
            f"{longest['name']}, {units.ms(longest['dur_us'] / 1e3)})")
