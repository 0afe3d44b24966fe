"""The memory blocks the front end's tests draw are the model's answer for the H200 recordings."""

from __future__ import annotations

import json

from memory_fixture import FIXTURE, memory_fixture


def test_the_committed_memory_fixture_is_the_models_answer() -> None:
    assert memory_fixture() == json.loads(FIXTURE.read_text())


def test_the_lane_carries_the_peak_and_the_phases_in_its_clock() -> None:
    over = memory_fixture()["gpt2"]["over_step"]
    i = over["series_bytes"].index(max(over["series_bytes"]))
    assert over["series_us"][i] == over["peak_us"] and over["series_bytes"][i] == over["peak_bytes"]
    lo, hi = over["series_us"][0], over["series_us"][-1]
    assert [p["name"] for p in over["phases"]] == ["forward", "backward", "optimizer"] * 2
    assert all(lo <= p["start_us"] <= p["end_us"] <= hi for p in over["phases"])
    ph = next(p for p in over["phases"] if p["start_us"] <= over["peak_us"] <= p["end_us"])
    assert ph["name"] == over["peak_phase"] == "backward"
