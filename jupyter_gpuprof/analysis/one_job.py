"""Whether the traces of a folder are the ranks of one job, before they are lined up as such.

Five traces of five different models in one folder would otherwise become "ranks 0-4" with
straggler advice between unrelated runs. Ranks of one job have distinct ranks, the same world
size and overlapping time spans (they ran together); a folder that fails this is reported
with the reason, and no cross-rank advice is drawn from it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol


class _RankFacts(Protocol):
    rank: int
    world_size: int | None
    t0_us: float
    span_us: float


def not_one_job(ranks: Sequence[_RankFacts]) -> list[str]:
    """Why these traces are not the ranks of one job (empty when they may be)."""
    problems = []
    repeated = sorted(r for r, n in Counter(s.rank for s in ranks).items() if n > 1)
    if repeated:
        problems.append(f"rank {', '.join(map(str, repeated))} is claimed by more than one trace")
    worlds = {s.world_size for s in ranks}
    if len(worlds) > 1:
        shown = ", ".join("none" if w is None else str(w) for w in sorted(
            worlds, key=lambda w: -1 if w is None else w))
        problems.append(f"their world sizes differ ({shown})")
    latest_start = max(s.t0_us for s in ranks)
    earliest_end = min(s.t0_us + s.span_us for s in ranks)
    if latest_start > earliest_end:
        gap_s = (latest_start - earliest_end) / 1e6
        problems.append(f"they did not run at the same time (one ends {gap_s:,.1f} s before "
                        "another starts)")
    return problems


def job_warning(problems: list[str], n: int) -> str:
    """The one warning a report carries when its traces are not one job."""
    return (f"these {n} traces are not the ranks of one job: {'; '.join(problems)}. Each is "
            "analysed, but no cross-rank advice is given; analyse them one by one.")
