"""The observer check's pooled readings: the runs a pool names, read together by one rule, and
only runs of one setting unless the pool says why it mixes them."""

from __future__ import annotations

import json
import math

import pytest
from benchmark_modules import load_benchmark
from paths import ROOT


@pytest.fixture(scope="module")
def pools():
    return load_benchmark("corpus/observer_pool")


def _run(call, rounds, cpus=None, block_s=0.5, **more):
    return {"id": "toy", "call": call, "block_s": block_s, "cpus": cpus, "rounds": rounds, **more}


def test_a_pool_reads_its_runs_rounds_together_first_values_left_out(pools):
    runs = [_run("1", [9.0, 9.0], rounds_without_first=[1.02, 1.00]),
            _run("2", [1.01, 0.99]), _run("3", [5.0, 5.0])]
    got = pools.pool(runs, {"id": "toy", "calls": ["1", "2"]})["reading"]
    assert got["pairs"] == 4
    want = math.exp(sum(math.log(x) for x in [1.02, 1.00, 1.01, 0.99]) / 4)
    assert got["ratio"] == pytest.approx(want)
    runs.append(_run("4", [9.0, 9.0], rounds_without_first=[]))  # re-read: no round left
    assert pools.pool(runs, {"id": "toy", "calls": ["1", "2", "4"]})["reading"]["pairs"] == 4


def test_runs_of_another_pinning_are_pooled_only_when_the_pool_says_why(pools):
    runs = [_run("1", [1.0, 1.01], cpus=[2, 3]), _run("2", [0.99, 1.0], cpus=[2, 3, 4, 5])]
    with pytest.raises(ValueError, match="pinning"):
        pools.pool(runs, {"id": "toy", "calls": ["1", "2"]})
    mixed = pools.pool(runs, {"id": "toy", "calls": ["1", "2"], "mixed": "2 CPUs and 4"})
    assert mixed["reading"]["pairs"] == 4 and "mixed: 2 CPUs and 4" in pools.line(mixed)
    with pytest.raises(ValueError, match="no run of call"):
        pools.pool(runs, {"id": "toy", "calls": ["1", "7"]})
    # blocks of whole epochs are read by their mean, time blocks by their median: never pooled
    epochs = [_run("1", [1.0, 1.01]), _run("2", [0.99, 1.0], align="epoch")]
    with pytest.raises(ValueError, match="block"):
        pools.pool(epochs, {"id": "toy", "calls": ["1", "2"]})


def test_runs_on_another_card_are_not_pooled_with_the_earlier_ones(pools):
    """Another card comes with another host, whose CPUs pace a host-bound loop: a run that
    names the H100 does not pool with the runs recorded before runs named their card."""
    runs = [_run("49.2", [1.0, 1.01]), _run("51.1", [0.99, 1.0], device="NVIDIA H100 80GB HBM3")]
    with pytest.raises(ValueError, match="card"):
        pools.pool(runs, {"id": "toy", "calls": ["49.2", "51.1"]})
    same = [_run("49.2", [1.0, 1.01]), _run("50.1", [0.99, 1.0], device="NVIDIA H200")]
    assert pools.pool(same, {"id": "toy", "calls": ["49.2", "50.1"]})["reading"]["pairs"] == 4


def test_every_committed_pool_names_runs_of_one_setting_or_says_why(pools):
    evidence = json.loads((ROOT / "docs" / "evidence" / "observer_inprocess_h200.json").read_text())
    read = pools.readings(evidence)
    assert read and all(p["why"] and p["reading"]["pairs"] >= 2 for p in read)


def test_a_scripts_standing_rests_on_a_pool_of_one_setting_never_a_mixed_one(pools):
    within = {"pairs": 9, "verdict": "within"}
    read = [{"id": "a", "calls": ["1", "2"], "mixed": "2 CPUs and 4", "reading": within},
            {"id": "b", "calls": ["3"], "reading": within},
            {"id": "b", "calls": ["4"], "reading": {"pairs": 9, "verdict": "not shown"}}]
    got = pools.standing(["a", "b", "c"], read)
    assert got["a"]["verdict"] == "not shown" and got["c"]["verdict"] == "not shown"
    assert got["b"] == {"verdict": "within", "calls": ["3"]}


def test_the_cpu_hosts_runs_are_read_by_the_same_rule(pools):
    run = {"rounds": [1.0, 1.01, 0.99, 1.0]}
    cpu = {"about": "x", "s": run, "session_9": {"about": "y", "s": run}}
    got = pools.cpu_readings(cpu)
    assert [(r["id"], r["calls"]) for r in got] == [("s", ["first"]), ("s", ["session_9"])]
    assert got[0]["reading"]["ratio"] == pytest.approx(math.exp(
        sum(math.log(x) for x in run["rounds"]) / 4))


def test_the_committed_evidence_puts_every_corpus_script_within_the_bar(pools):
    """The README's claim (every script of the corpus within 3 % of itself run alone) is
    what the committed rounds read, by the rule above, not a line copied by hand."""
    read = pools.readings(json.loads(pools.EVIDENCE.read_text()))
    read += pools.cpu_readings(json.loads(pools.CPU_EVIDENCE.read_text()))
    scripts = [s["id"] for s in json.loads(pools.MANIFEST.read_text())["scripts"]]
    stand = pools.standing(scripts, read)
    assert len(stand) == 13
    assert [s for s, st in stand.items() if st["verdict"] != "within"] == []
