"""What a run's meta hands the analysis beside the trace: the baseline's side of the run.

The capture writes the unprofiled baseline, its stall events, its waits for data, its warm-up
steps, the steps after the capture and the GPU's sampled conditions into meta.json; here they
are read as `analysis.summary.analyze` takes them, each checked for its shape (a meta.json is
user-editable input).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..analysis.conditions import gpu_time_spread
from ..analysis.loader_pace import LoaderPace, loader_pace
from ..analysis.summary import probe_neighbour_ms


def gpu_spread(conditions: object) -> float:
    """`gpu_time_spread` of a meta's sampled conditions (1.0 where none were sampled)."""
    if not isinstance(conditions, Mapping):
        return 1.0
    return gpu_time_spread(conditions.get("baseline"), conditions.get("capture"))


def baseline_side(baseline: object) -> tuple[list[Mapping[str, object]] | None, int | None,
                                             LoaderPace | None, float | None,
                                             Mapping[str, object] | None]:
    """The capture's stall events, epoch length, wait for data, the warm-up step beside its
    host probe and the steps after the capture from a meta's `baseline` (as decoded:
    analysis.spikes keeps only the events and steps of the right shape), in `analyze`'s
    order."""
    if not isinstance(baseline, dict):
        return None, None, None, None, None
    events, epoch = baseline.get("stalls"), baseline.get("epoch_steps")
    waits, workers = baseline.get("loader_ms"), baseline.get("loader_workers")
    settled, after = baseline.get("settle_steps"), baseline.get("after")
    return (events if isinstance(events, list) else None,
            int(epoch) if isinstance(epoch, int) and epoch > 0 else None,
            loader_pace(waits if isinstance(waits, list) else None,
                        workers if isinstance(workers, int) else 0,
                        settled if isinstance(settled, int) and settled > 0 else 0),
            probe_neighbour_ms(baseline.get("warmup_ms")),
            after if isinstance(after, dict) else None)
