"""Counter tracks under the timeline: GPU memory allocated as a bounded step line."""

import numpy as np
from paths import TESTS
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.timeline_counters import MAX_POINTS, _bounded
from jupyter_gpuprof.report import analyze_path


def test_memory_allocated_is_a_track_per_gpu_in_gb_from_the_window_start(tmp_path):
    b = TraceBuilder()
    b.memory(5.0, 1_000_000_000, 1_000_000_000)  # before the steps: the window opens at 1 GB
    for k, t0 in ((1, 100.0), (2, 1100.0)):
        b.step(k, t0, 1000.0)
        mm = b.op("aten::mm", t0 + 20, 40.0)
        b.kernel("gemm", t0 + 30, t0 + 100, 150.0, ext=mm)
        b.memory(t0 + 50, 3_500_000_000, 2_500_000_000)
        b.memory(t0 + 600, 1_000_000_000, -2_500_000_000)
    tl = analyze_path(b.write(tmp_path / "t.json.gz")).to_json()["timeline"]
    (track,) = tl["counters"]
    assert track["label"] == "GPU 0 memory allocated" and track["unit"] == "GB"
    assert track["v"][0] == 1.0 and track["t"][0] == 0.0  # the value held when the window opens
    assert max(track["v"]) == 3.5
    assert track["t"] == sorted(track["t"])


def test_a_long_track_is_bounded_and_keeps_its_peak():
    t = np.arange(10_000, dtype=float)
    v = np.ones(10_000)
    v[7_777] = 42.0  # one short spike
    tb, vb = _bounded(t, v, 0.0, 10_000.0)
    assert len(tb) <= MAX_POINTS and vb.max() == 42.0


def test_no_allocator_events_no_track(tmp_path):
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    b.kernel("gemm", 30.0, 100.0, 150.0)
    assert analyze_path(b.write(tmp_path / "t.json.gz")).to_json()["timeline"]["counters"] == []


def test_a_real_profile_memory_trace_has_its_peak_on_the_track():
    s = analyze_path(TESTS / "data" / "real" / "memory").to_json()
    (track,) = s["timeline"]["counters"]
    peak = s["memory"]["peaks"][0]["peak_allocated_bytes"] / 1e9
    # the window holds the peak here; bounded, the track still reaches it
    assert abs(max(track["v"]) - peak) < 1e-3
