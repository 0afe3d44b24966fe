"""The baseline's wait for data: when DataLoader workers pace the loop."""

import pytest

from jupyter_gpuprof.analysis.loader_pace import HANDOVER_MS, loader_pace


def test_workers_pace_a_loop_that_waits_a_tenth_of_its_step():
    pace = loader_pace([0.1, 6.0, 7.0, 8.0, 7.5], 1)
    assert pace is not None and pace.wait_ms == 7.0 and pace.steps == 5
    assert pace.paces(10.0)
    assert not pace.paces(100.0)  # 7 ms of a 100 ms step: the GPU sets that pace
    # the wait less the hand-over each batch from a worker still costs once the loader keeps up
    assert pace.saving_ms(10.0, 1.0) == pytest.approx(7.0 - HANDOVER_MS)
    assert pace.saving_ms(10.0, 5.0) == 5.0  # never below the GPU's own work
    assert loader_pace([0.15] * 10, 0).saving_ms(1.4, 0.02) == 0.0  # shorter than a hand-over


def test_the_queue_hand_over_and_loading_in_process_do_not_pace():
    assert not loader_pace([0.05] * 10, 4).paces(0.3)  # a hand-over, not a wait
    assert not loader_pace([5.0] * 10, 0).paces(6.0)  # no workers: the process's own work
    assert loader_pace([], 2) is None and loader_pace(None, 2) is None
