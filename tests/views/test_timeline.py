"""The bounded timeline summary: exact lanes on a tiny trace, the rectangle bound on a big one."""

import json

import numpy as np
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.timeline import MAX_RECTS, level_of_detail, outermost
from jupyter_gpuprof.analysis.timeline_detail import MAX_INLINE_EVENTS
from jupyter_gpuprof.report import analyze_path


def test_level_of_detail_keeps_small_lanes_and_bins_big_ones():
    ts = np.arange(10, dtype=float) * 10
    end = ts + 5
    s, e, n, rep = level_of_detail(ts, end, 20, 0.0, 100.0)
    assert s.tolist() == ts.tolist() and n.tolist() == [1] * 10 and rep.tolist() == list(range(10))
    # budget 4: 2 bins of 50 µs, and 2 breaks at the longest idle stretches; event 3 runs
    # to 39, so the idle before events 1 (5 µs, the first of the equal longest) and 2 split
    end[3] = 39.0
    s, e, n, rep = level_of_detail(ts, end, 4, 0.0, 100.0)
    assert s.tolist() == [0, 10, 20, 50] and e.tolist() == [5, 15, 45, 95]
    assert n.tolist() == [1, 1, 3, 5] and rep.tolist()[2] == 3


def test_level_of_detail_never_spans_a_drawn_gap():
    # 100 events of 1 µs, 1 µs apart; event 20 runs to 41.8, so the stretch before event 21
    # is the shortest of all, yet it holds a drawn gap
    ts = np.arange(100, dtype=float) * 2
    end = ts + 1
    end[20] = 41.8
    keep = np.array([[41.85, 41.95]])
    s, e, n, _ = level_of_detail(ts, end, 4, 0.0, 200.0, keep)
    assert not any(a < 41.9 < b for a, b in zip(s, e, strict=True)) and sum(n) == 100
    s, e, _, _ = level_of_detail(ts, end, 4, 0.0, 200.0)
    assert any(a < 41.9 < b for a, b in zip(s, e, strict=True))  # without it, merged over


def test_outermost_drops_nested_calls():
    ts = np.array([0.0, 1.0, 2.0, 10.0, 11.0])
    end = np.array([9.0, 3.0, 2.5, 20.0, 12.0])
    assert outermost(ts, end).tolist() == [True, False, False, True, False]


def _trace(tmp_path, n_kernels=3):
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    mm = b.op("aten::mm", 10.0, 40.0, dims=[[64, 32], [32, 16]])
    b.kernel("gemm_a", 20.0, 100.0, 300.0, ext=mm)
    b.annotation("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 500.0, 300.0)
    for i in range(n_kernels - 1):
        add = b.op("aten::add", 850.0 + i * 0.004, 0.002)
        b.kernel("elementwise_b", 850.0 + i * 0.004, 900.0 + i * 0.004, 0.002, ext=add)
    return analyze_path(b.write(tmp_path / "t.json.gz"))


def test_lanes_gaps_and_hover_fields(tmp_path):
    tl = _trace(tmp_path).to_json()["timeline"]
    kinds = [lane["kind"] for lane in tl["lanes"]]
    assert kinds == ["ranges", "cpu", "gpu"]  # CPU lanes above GPU lanes
    gpu = tl["lanes"][-1]
    names = tl["names"]
    assert [names[i] for i in gpu["name"]][:2] == ["gemm_a", "elementwise_b"]
    assert gpu["start"][0] == 100.0 and gpu["dur"][0] == 300.0
    assert names[gpu["op"][0]] == "aten::mm" and "64, 32" in names[gpu["shape"][0]]
    assert tl["gaps"]["cause"][1] == "input" and tl["gaps"]["start"][1] == 400.0
    # the profiler's id, numbered 1..n as every view counts steps, and its series time
    assert tl["steps"] == [{"step": 1, "start": 0.0, "end": 1000.0, "number": 1, "dur_ms": 1.0}]


def test_big_lanes_are_bounded(tmp_path):
    r = _trace(tmp_path, n_kernels=20000)
    tl = r.to_json()["timeline"]
    assert tl["n_events"] > 20000 and tl["n_rects"] <= MAX_RECTS
    gpu = tl["lanes"][-1]
    assert sum(gpu["count"]) == gpu["n_events"]  # every event is inside some rectangle
    detail, strings = tl.pop("detail"), tl.pop("strings")
    assert len(json.dumps(tl)) < 400_000  # the aggregated view
    inline = [d for d in detail if d is not None]
    assert sum(len(d["lane"]) for d in inline) <= MAX_INLINE_EVENTS
    assert len(json.dumps([detail, strings])) < 1_500_000  # the step tables, 2 MB with the rest
