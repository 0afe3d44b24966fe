"""Figure builders and inline SVG charts: summary dict in, exact figure out; names escaped."""

import plotly.graph_objects as go
import pytest

from jupyter_gpuprof.views.figures import (
    kernel_kinds_figure,
    report_figures,
    step_time_figure,
    timeline_figure,
    transfers_figure,
)

PAYLOAD = "<img src=x onerror=alert(1)>"
STEPS = {"baseline_ms": [10.0, 11.0, 12.0, 10.5, 40.0], "profiled_ms": [13.0, 14.0]}
TIMELINE = {
    "dur_us": 1000.0, "names": ["gemm", PAYLOAD, "[[64, 32]]", "aten::mm"],
    "lanes": [
        {"id": "cpu:1", "label": "CPU thread 1", "kind": "cpu", "n_events": 1,
         "start": [0.0], "dur": [50.0], "count": [1], "name": [3]},
        {"id": "gpu:0:7", "label": "GPU 0 stream 7", "kind": "gpu", "n_events": 5,
         "start": [100.0, 600.0], "dur": [300.0, 20.0], "count": [1, 4], "name": [0, 1],
         "op": [3, 1], "shape": [2, 2]},
    ],
    "n_rects": 3, "n_events": 6, "max_rects": 4000, "n_gaps": 2,
    "gaps": {"start": [0.0, 400.0], "dur": [100.0, 200.0], "cause": ["host", "input"]},
    "steps": [{"step": 1, "start": 0.0, "end": 1000.0}],
}


def test_step_time_figure_marks_median_p95_and_outliers():
    fig = step_time_figure(STEPS)
    base, prof = fig["data"]
    assert base["type"] == "box" and base["x"] == STEPS["baseline_ms"]
    assert prof["name"] == "profiled window" and prof["x"] == [13.0, 14.0]
    texts = [a["text"] for a in fig["layout"]["annotations"]]
    assert "median 11 ms" in texts and "p95 34.4 ms" in texts  # numpy linear percentiles
    assert "#4" in texts  # the 40 ms step is labelled as an outlier
    assert [s["x0"] for s in fig["layout"]["shapes"]][:2] == pytest.approx([11.0, 34.4])
    go.Figure(fig)  # valid plotly


def test_timeline_figure_lanes_gaps_and_escaped_hover():
    fig = timeline_figure(TIMELINE)
    cpu, gpu = fig["data"][:2]
    assert cpu["y"] == ["CPU thread 1"] and gpu["base"] == [0.1, 0.6] and gpu["x"] == [0.3, 0.02]
    assert fig["layout"]["yaxis"]["categoryarray"] == ["CPU thread 1", "GPU 0 stream 7"]
    assert gpu["hovertext"][0] == "gemm<br>op: aten::mm<br>shapes: [[64, 32]]<br>0.30 ms"
    assert "&lt;img" in gpu["hovertext"][1] and "<img" not in gpu["hovertext"][1]
    assert "(4 events merged)" in gpu["hovertext"][1]
    gaps = fig["layout"]["shapes"]
    assert [(g["x0"], g["x1"]) for g in gaps] == [(0.0, 0.1), (0.4, 0.6)]
    assert [d["name"] for d in fig["data"][2:]] == ["idle: host", "idle: input"]
    go.Figure(fig)


def test_transfers_and_kinds_figures():
    transfers = [{"kind": "HtoD", "pageable": True, "count": 10, "bytes": 2_000_000,
                  "dur_us": 100.0, "blocking": 10, "gbps": 20.0}]
    syncs = {"count": 3, "per_step": 1.5,
             "top": [{"caller": PAYLOAD, "calls": 3, "gpu_idle_after_us": 1500.0,
                      "cost_ms_per_step": 1.5}]}
    fig = transfers_figure(transfers, syncs)
    assert fig["data"][0]["x"] == ["HtoD pageable"] and fig["data"][0]["y"] == [2.0]
    assert fig["data"][1]["x"] == [1.5] and fig["data"][1]["y"][0].startswith("&lt;img")
    kinds = kernel_kinds_figure([{"kind": "gemm", "tensor_core": True, "total_us": 500.0,
                                  "calls": 5, "ms_per_step": 0.5, "calls_per_step": 5.0}])
    assert kinds["data"][0]["y"] == ["gemm (Tensor Cores)"] and kinds["data"][0]["x"] == [0.5]
    for f in (fig, kinds):
        go.Figure(f)


def test_missing_parts_give_empty_figures_not_errors():
    figs = report_figures({"steps": {}, "timeline": None, "transfers": [], "syncs": {},
                           "kernel_kinds": []})
    assert all(f["data"] == [] for f in figs.values())
    assert "not available" in figs["timeline"]["layout"]["title"]["text"]


def test_warmup_steps_are_greyed_beside_the_baseline():
    steps = dict(STEPS, warmup_ms=[900.0, 12.0])
    fig = step_time_figure(steps)
    assert [d["name"] for d in fig["data"]][0] == "warm-up (excluded)"
    assert fig["data"][0]["marker"]["color"] == "#bbbbbb"
