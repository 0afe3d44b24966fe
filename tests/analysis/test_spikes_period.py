"""A stall that recurs once a period is priced once a period, however many of them the
baseline happened to hold."""

from __future__ import annotations

import pytest

from jupyter_gpuprof.analysis.spikes import find_spikes


def _epochs(starts: list[int], n: int = 12) -> tuple[list[float], list[dict]]:
    """Steps of 2 ms, 300 ms more where an epoch of 8 steps starts its workers."""
    ms = [302.0 if i in starts else 2.0 for i in range(n)]
    events = [{"what": "loader-start", "step": i, "ms": 1.0, "workers": 2, "batches": 8,
               "epoch": k} for k, i in enumerate(starts)]
    return ms, events


@pytest.mark.parametrize("starts", [[1], [1, 9]])
def test_an_epoch_start_costs_its_stall_once_an_epoch_however_many_the_baseline_held(starts):
    ms, events = _epochs(starts)
    s = find_spikes(ms, events, epoch_steps=8)
    assert s is not None and all(st.period_steps == 8 for st in s.stalls)
    assert len(s.stalls) == len(starts)
    # 300 ms once every 8 steps over a 2 ms median, whether 12 steps held one start or two
    assert s.wall_ms == pytest.approx(2.0 + 300.0 / 8)
    assert s.excess_of("input") == pytest.approx(300.0 / 8)
