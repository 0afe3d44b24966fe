"""The allocator history replayed: the peak of the recordings against max_memory_allocated."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest
from memory_recordings import MEMORY, history, truth, within

from jupyter_gpuprof.analysis.memory_history import MemoryHistoryError, load_history, replay


@pytest.mark.parametrize("case", ["gpt2", "fragmented", "oom"])
def test_replayed_peak_is_max_memory_allocated(case: str) -> None:
    h = history(case)
    assert within(h.peak_bytes, truth(case)["max_memory_allocated"], 0.1)


def test_blocks_from_before_the_recording_start_the_series() -> None:
    """Parameters and optimizer state have no alloc event: they are live from the start."""
    h = history("gpt2")
    t = truth("gpt2")
    assert h.start_bytes >= t["parameters_bytes"] + t["optimizer_state_bytes"]
    # without them the series would start at zero and the peak would miss them
    assert h.allocated.min() >= h.start_bytes - 1


def test_allocated_at_the_end_is_the_snapshots() -> None:
    for case in ("gpt2", "fragmented"):
        assert within(int(history(case).allocated[-1]), truth(case)["memory_allocated_after"], 0.1)


def test_phases_are_the_capture_ranges() -> None:
    names = [p.name for p in history("gpt2").phases]
    assert names.count("forward") == 2 and names.count("backward") == 2
    assert all(p.end_us >= p.start_us for p in history("gpt2").phases)


def test_tiny_history_exact() -> None:
    """One block before the recording, two allocations, one freed: exact bytes after each event."""
    snap = {
        "segments": [
            {
                "device": 0,
                "total_size": 1000,
                "blocks": [
                    {"address": 0, "size": 100, "state": "active_allocated", "frames": []},
                    {"address": 100, "size": 300, "state": "active_allocated", "frames": []},
                    {"address": 400, "size": 600, "state": "inactive", "frames": []},
                ],
            }
        ],
        "device_traces": [
            [
                {"action": "alloc", "addr": 100, "size": 300, "time_us": 1, "frames": []},
                {"action": "alloc", "addr": 400, "size": 200, "time_us": 2, "frames": []},
                {"action": "free_completed", "addr": 400, "size": 200, "time_us": 3, "frames": []},
            ]
        ],
    }
    h = replay(snap)
    assert h.allocated.tolist() == [400, 600, 400]
    assert h.peak_i == 1 and h.peak_bytes == 600 and h.reserved_bytes == 1000
    assert sorted(h.live_at(1)["bytes"].tolist()) == [100, 200, 300]


def test_not_a_history_is_one_line(tmp_path) -> None:
    bad = tmp_path / "memory_history.json.gz"
    bad.write_bytes(gzip.compress(json.dumps({"x": 1}).encode()))
    with pytest.raises(MemoryHistoryError, match="not an allocator snapshot"):
        load_history(bad)
    bad.write_bytes(b"\x1f\x8b garbage")
    with pytest.raises(MemoryHistoryError, match="not a readable allocator history"):
        load_history(bad)
    assert isinstance(np.asarray(history("oom").allocated), np.ndarray)
    assert (MEMORY / "oom.truth.json").exists()
