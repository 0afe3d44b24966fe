"""The timeline of a multi-rank run: one lane group per rank, on one aligned axis, bounded."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest
from paths import TESTS
from runs_fixtures import write_meta

from jupyter_gpuprof.analysis.timeline import MAX_RECTS
from jupyter_gpuprof.analysis.timeline_ranks import (
    MAX_RANK_LANES,
    RankLanes,
    merge_rank_lanes,
    rank_shifts,
)
from jupyter_gpuprof.report import SUMMARY_SCHEMA_VERSION, analyze_path, cached_summary, run_summary
from jupyter_gpuprof.report.timeline_step import NoSuchStep, run_step_timeline
from jupyter_gpuprof.store.run import open_run

DATA = TESTS / "data"
MAX_REPORT_BYTES = 2 * 1024 * 1024  # a report's budget, its timeline included
LABEL = re.compile(r"^rank (\d+) · (.+)$")


def _groups(tl: dict) -> dict[int, list[dict]]:
    groups: dict[int, list[dict]] = {}
    for lane in tl["lanes"]:
        m = LABEL.match(lane["label"])
        assert m, lane["label"]
        groups.setdefault(int(m.group(1)), []).append(lane)
    return groups


def _collective_ends(lanes: list[dict]) -> np.ndarray:
    nccl = next(lane for lane in lanes if lane["label"].endswith("NCCL"))
    assert set(nccl["count"]) == {1}  # one rectangle per collective kernel
    return np.array(nccl["start"]) + np.array(nccl["dur"])


def test_dlrm_eight_ranks_are_eight_lane_groups_whose_collectives_end_together():
    s = analyze_path(DATA / "wild" / "param" / "dlrm_8ranks").to_json()
    tl = s["timeline"]
    groups = _groups(tl)
    assert list(groups) == list(range(8))  # grouped, in rank order
    assert len(tl["lanes"]) <= MAX_RANK_LANES and tl["n_rects"] <= MAX_RECTS
    assert all(g[0]["label"].endswith("main thread") and g[0]["kind"] == "cpu"
               for g in groups.values())
    assert tl["ranks_aligned_by"] == "collectives"
    # every rank leaves a collective at nearly the same instant: on a common axis the k-th
    # collective of each rank ends within a few µs (the windows start 5 ms apart)
    ends = np.array([_collective_ends(g) for g in groups.values()])
    assert ends.shape == (8, 8) and float(np.ptp(ends, axis=0).max()) < 10.0
    assert min(min(lane["start"]) for lane in tl["lanes"]) >= 0
    assert max(max(np.add(lane["start"], lane["dur"])) for lane in tl["lanes"]) <= tl["dur_us"]
    assert len(json.dumps(s)) < MAX_REPORT_BYTES


@pytest.mark.parametrize("name", ["ddp_workload_straggler", "ddp2_heavy1"])
def test_real_two_rank_runs_get_a_bounded_aligned_timeline(name):
    s = analyze_path(DATA / "real" / name).to_json()
    tl = s["timeline"]
    groups = _groups(tl)
    assert list(groups) == [0, 1] and tl["ranks_aligned_by"] == "collectives"
    a, b = (_collective_ends(g) for g in groups.values())
    # the ranks leave each collective together (a capture may start a collective earlier, so
    # each end of rank 0 is set beside the nearest end of rank 1); collectives are ms apart
    near = np.abs(a[:, None] - b[None, :]).min(axis=1)
    assert float(np.median(near)) < 50.0 < float(np.median(np.diff(a)))
    assert tl["n_rects"] <= MAX_RECTS and tl["gaps"]["start"] == []
    assert tl["detail"] == [None] * len(tl["steps"])
    assert len(json.dumps(s)) < MAX_REPORT_BYTES


def _rank(rank: int, origin: float, step_at: float) -> RankLanes:
    lane = {"id": "gpu:0:7", "label": "stream 7 compute", "kind": "gpu", "n_events": 1,
            "start": [step_at], "dur": [10.0], "count": [1], "name": [0]}
    return RankLanes(rank, origin, {
        "dur_us": 100.0, "names": [f"k{rank}"], "lanes": [lane], "max_rects": 50,
        "steps": [{"step": 4, "start": step_at - 5, "end": step_at + 20},
                  {"step": 5, "start": step_at + 20, "end": step_at + 40}],
        "profiled_scale": None})


def test_clock_offsets_from_collectives_shift_each_rank():
    groups = [_rank(0, 1000.0, 10.0), _rank(1, 1250.0, 10.0)]
    shifts, how = rank_shifts(groups, {0: 0.0, 1: 200.0})  # rank 1's clock runs 200 µs ahead
    assert how == "collectives" and shifts == [0.0, 50.0]


def test_without_collectives_the_ranks_line_up_at_their_first_common_step():
    groups = [_rank(0, 1000.0, 10.0), _rank(1, 5000.0, 30.0)]
    shifts, how = rank_shifts(groups, None)
    assert how == "step 4"
    starts = [shift + g.timeline["steps"][0]["start"] for g, shift in zip(groups, shifts,
                                                                          strict=True)]
    assert starts[0] == starts[1]
    tl = merge_rank_lanes(groups)
    assert [lane["label"] for lane in tl["lanes"]] == ["rank 0 · stream 7 compute",
                                                       "rank 1 · stream 7 compute"]
    # each rank's names are re-indexed into the merged table
    assert [tl["names"][lane["name"][0]] for lane in tl["lanes"]] == ["k0", "k1"]


def test_unrelated_traces_get_no_timeline():
    s = analyze_path(DATA / "wild" / "tracelens" / "h100_two_models").to_json()
    assert s["timeline"] is None and s["warnings"]


def test_a_multi_rank_run_has_no_per_step_events_to_serve(tmp_path):
    folder = tmp_path / "20261129-191322-ddp"
    shutil.copytree(DATA / "real" / "ddp_workload_comm", folder)
    write_meta(folder, baseline={"step_ms": [], "timing": None})
    with pytest.raises(NoSuchStep, match="2 ranks"):
        run_step_timeline(open_run(folder), 1)


def test_a_multi_rank_summary_cached_before_the_rank_timeline_is_analysed_again(tmp_path):
    folder = tmp_path / "20261129-191322-ddp"
    shutil.copytree(DATA / "real" / "ddp_workload_comm", folder)
    write_meta(folder, baseline={"step_ms": [], "timing": None})
    run = open_run(folder)
    assert run_summary(run)["timeline"] is not None
    cache = folder / "summary.json"
    current = json.loads(cache.read_text())
    # what a version-1 analysis cached for this run: it decodes into today's model
    old = {**current, "schema_version": 1, "timeline": None}
    unversioned = {k: v for k, v in current.items() if k != "schema_version"}
    for stale in (old, unversioned):
        cache.write_text(json.dumps(stale))
        assert cached_summary(run) is None
        again = run_summary(run)
        assert again["schema_version"] == SUMMARY_SCHEMA_VERSION and again["timeline"]
        assert json.loads(cache.read_text())["timeline"] == again["timeline"]  # cached anew
    assert cached_summary(run) == again
