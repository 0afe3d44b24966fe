"""The observer check within each process (benchmarks/corpus/observer.py, observer_causes.py):
the baseline window over the same process's later iterations, tool against alone, so the
process's own speed (10 % apart between processes) divides out."""

from __future__ import annotations

import math
import sys

import pytest
from benchmark_modules import load_benchmark
from paths import ROOT

CAPTURE = ["--steps", "60", "--warmup", "3", "--wait", "1", "--prof-warmup", "1", "--active", "3"]


def _load(name):
    return load_benchmark(f"corpus/{name}")


@pytest.fixture(scope="module")
def observer():
    return _load("observer")


def _own(level, window_extra, n=62, per=5, skip=2):
    """A word-LM-like log (a value per 5 iterations, from iteration 1), `level` ms, the values
    inside the baseline window (iterations 5-63) `window_extra` times slower."""
    series = []
    for i in range(skip, n):
        start = 1 + i * per
        series.append(level * (window_extra if 5 <= start and start + per - 1 <= 63 else 1.0))
    return {"series_ms": series, "skip": skip}


def test_the_later_iterations_start_after_the_capture_and_its_write(observer):
    # warm-up 3 + baseline 60 + wait 1 + profiler warm-up 1 + traced 3, then the margin
    assert observer.after_capture(CAPTURE) == 68 + observer.AFTER_MARGIN


def test_a_slower_process_reads_the_same_within_itself(observer):
    # two processes 30 % apart in their own speed, neither observed: the same ratio (1.0)
    fast = observer.within_process(_own(5.0, 1.0), CAPTURE, 5, 1)
    slow = observer.within_process(_own(6.5, 1.0), CAPTURE, 5, 1)
    assert fast == pytest.approx(1.0) and slow == pytest.approx(1.0)
    # observed 4 % slower in its window: 1.04, whatever its own speed
    assert observer.within_process(_own(6.5, 1.04), CAPTURE, 5, 1) == pytest.approx(1.04)


def test_no_later_iterations_no_ratio(observer):
    # a run stopped after its capture has no control of its own
    own = _own(5.0, 1.0, n=14)
    assert observer.within_process(own, CAPTURE, 5, 1) is None


def test_pairs_divide_the_alone_drift_out():
    causes = _load("observer_causes")
    # alone drifts 2 % (early iterations slower) in every process; the tool adds 3 %
    alone = [1.02, 1.02, 1.02]
    tool = [1.02 * 1.03, 1.02 * 1.03, 1.02 * 1.03]
    out = causes._paired({"alone": alone, "tool-on": tool})["tool-on"]
    assert out["ratio"] == pytest.approx(1.03, rel=1e-9)
    assert out["ci95"][0] == pytest.approx(1.03) and out["ci95"][1] == pytest.approx(1.03)
    noisy = causes._paired({"alone": [1.0, 1.0, 1.0], "tool-on": [1.0, 1.1, 0.95]})["tool-on"]
    lo, hi = noisy["ci95"]
    assert lo < noisy["ratio"] < hi and hi / lo > 1.1
    assert noisy["ratio"] == pytest.approx(math.exp((math.log(1.1) + math.log(0.95)) / 3))


@pytest.fixture(scope="module")
def concurrent():
    return _load("observer_concurrent")


def test_concurrent_pairs_judge_the_bar_only_with_the_whole_interval(concurrent):
    """Within 3 % only when the 95 % interval of the pairs' geometric mean lies inside
    [0.97, 1.03]; outside when it lies wholly beyond; else not shown, with the pairs needed."""
    tight = [1.01, 1.00, 1.02, 0.99, 1.01, 1.00, 1.02, 1.01]
    assert concurrent.pooled(tight)["verdict"] == "within"
    assert concurrent.pooled([r * 1.08 for r in tight])["verdict"] == "outside"
    wide = [0.92, 1.10, 0.97, 1.12, 0.95, 1.08]
    got = concurrent.pooled(wide)
    assert got["verdict"] == "not shown" and got["pairs_for_bar"] > len(wide)
    lo, hi = got["ci95"]
    assert lo < got["ratio"] < hi and math.isclose(
        got["ratio"], math.exp(sum(map(math.log, wide)) / len(wide)))
    assert concurrent.pooled([1.0])["verdict"] == "not shown"  # one pair judges nothing


def test_the_median_reading_is_the_sign_tests_interval_and_leaves_the_verdict_alone(concurrent):
    """Beside the geometric mean: the pairs' median with its distribution-free 95 % interval,
    which a few pairs that met a jump of the host's speed do not stretch."""
    steady = [1.00 + 0.002 * (i % 5) for i in range(30)]  # 1.000-1.008
    jumpy = steady[:24] + [0.75, 1.33, 0.76, 1.34, 0.74, 1.35]
    got = concurrent.pooled(jumpy)
    # n = 30: P(Bin(30, 1/2) <= 9) = 0.021 <= 0.025 < P(<= 10), so the 10th and 21st values
    s = sorted(jumpy)
    assert got["median_ci95"] == [s[9], s[20]]
    assert got["median"] == pytest.approx(1.004)
    assert got["verdict"] == "not shown"  # the verdict is still the mean's, which the jumps widen
    assert 0.97 <= got["median_ci95"][0] and got["median_ci95"][1] <= 1.03
    few = concurrent.pooled([1.0, 1.01, 0.99, 1.02, 1.0])
    assert "median_ci95" not in few and few["median"] == 1.0  # 5 pairs: no 95 % interval


def test_a_scripts_own_pythonpath_goes_before_ours_not_instead(monkeypatch):
    """minGPT's manifest sets PYTHONPATH=. (its package is in its folder): replacing ours with it
    made `python -m jupyter_gpuprof` fail under the observer runs ("No module named
    jupyter_gpuprof"). Every corpus run takes its environment from `run_gpu.script_env`."""
    run_gpu = _load("run_gpu")
    monkeypatch.setenv("PYTHONPATH", "/ours")
    sep = __import__("os").pathsep
    assert run_gpu.script_env({"env": {"PYTHONPATH": "."}})["PYTHONPATH"] == f".{sep}/ours"
    assert run_gpu.script_env({})["PYTHONPATH"] == "/ours"
    env = run_gpu.script_env({"env": {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}})
    assert env["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8" and env["PYTHONPATH"] == "/ours"
    for name in ("observer_concurrent", "observer_causes"):
        source = (ROOT / "benchmarks" / "corpus" / f"{name}.py").read_text()
        assert "run_gpu.script_env(entry)" in source and "os.environ, **" not in source


def test_concurrent_sides_swap_gpus_every_pair_and_can_share_one(concurrent, monkeypatch):
    """Each side has each GPU over two pairs; `OBSERVER_GPUS=0,0` runs both on one GPU (the
    only kind a one-GPU host lends), `2,3` on two others."""
    assert [concurrent.placement(i) for i in range(4)] == [(0, 1), (1, 0), (0, 1), (1, 0)]
    assert {concurrent.placement(i, (0, 0)) for i in range(3)} == {(0, 0)}
    monkeypatch.setenv("OBSERVER_GPUS", "2,3")
    assert [concurrent.placement(i, concurrent.gpus_from_env()) for i in range(2)] == [
        (2, 3), (3, 2)]
    monkeypatch.delenv("OBSERVER_GPUS")
    assert concurrent.gpus_from_env() == (0, 1)


def test_a_longer_baseline_moves_the_command_and_the_window_together(concurrent, monkeypatch):
    """$OBSERVER_STEPS lengthens the tool's baseline: the flags the tool runs with and the window
    of log values it is scored on must both move, or the pairs compare the wrong iterations."""
    entry = {"observer": {"capture": ["--steps", "60", "--warmup", "3"]}}
    monkeypatch.delenv("OBSERVER_STEPS", raising=False)
    assert concurrent.capture_flags(entry) == ["--steps", "60", "--warmup", "3"]
    monkeypatch.setenv("OBSERVER_STEPS", "400")
    flags = concurrent.capture_flags(entry)
    assert flags == ["--steps", "400", "--warmup", "3"]
    assert entry["observer"]["capture"][1] == "60"  # the manifest entry is not changed
    assert concurrent.observer.window(flags) == (5, 403)
    assert concurrent.capture_flags({"capture": ["--warmup", "2"]})[-2:] == ["--steps", "400"]


def test_each_side_gets_a_physical_core_of_its_own_away_from_core_0(concurrent, tmp_path):
    """Cores are read from the CPU topology (hyperthreads of one core together); the sides take
    the last two, never core 0; the pin is inherited by what the pinned command starts."""
    for cpu, siblings in {0: "0,4", 1: "1,5", 2: "2-3", 3: "2-3", 4: "0,4", 5: "1,5",
                          6: "6"}.items():
        top = tmp_path / f"cpu{cpu}" / "topology"
        top.mkdir(parents=True)
        (top / "thread_siblings_list").write_text(siblings + "\n")
    cores = concurrent.physical_cores(tmp_path)
    assert cores == [[0, 4], [1, 5], [2, 3], [6]]
    assert concurrent.side_cores(cores) == ([2, 3], [6])
    assert concurrent.side_cores(cores[:2]) is None
    assert concurrent.pinned(["python", "x.py"], None) == ["python", "x.py"]
    got = concurrent.pinned(["/usr/bin/python3", "x.py"], [2, 3])
    assert got[-2:] == ["/usr/bin/python3", "x.py"] and "sched_setaffinity(0, {2, 3})" in got[2]


def test_a_pinned_command_runs_on_its_cores_only(concurrent):
    """The pin really holds in the started process (Linux: sched_getaffinity)."""
    import os
    import subprocess

    mine = sorted(os.sched_getaffinity(0))
    show = "import os; print(sorted(os.sched_getaffinity(0)))"
    cmd = concurrent.pinned([sys.executable, "-c", show], mine[:1])
    assert subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip() == str(
        mine[:1])


def test_within_its_process_a_slow_process_reads_like_a_fast_one(concurrent, monkeypatch):
    """A process that runs every iteration 1.5x slower (the word LM's slow mode) reads the same
    baseline-over-later ratio as a fast one; the later iterations start $OBSERVER_LATE after
    the capture, so iterations just after it (the trace being written) are not the control."""
    monkeypatch.setenv("OBSERVER_LATE", "20")
    capture = ["--steps", "20", "--warmup", "3", "--wait", "1", "--prof-warmup", "1",
               "--active", "3"]
    start = concurrent.late_start(capture)
    assert start == concurrent.observer.after_capture(capture) + 20
    # one value per iteration, skip 2: value i is iteration i + 2; the tool's window 1.03x
    fast = [1.0] * 3 + [1.03] * 21 + [9.0] * (start - 26) + [1.0] * 10
    own = {"skip": 2, "series_ms": fast}
    slow = {"skip": 2, "series_ms": [1.5 * v for v in fast]}
    got_fast = concurrent.within_ratio(own, capture, 1, 0)
    assert got_fast == pytest.approx(1.03)
    assert concurrent.within_ratio(slow, capture, 1, 0) == pytest.approx(got_fast)
    assert concurrent.within_ratio({"skip": 2, "series_ms": fast[:40]}, capture, 1, 0) is None
    monkeypatch.setenv("OBSERVER_LATE", "0")  # the slow iterations after the capture count
    assert concurrent.within_ratio(own, capture, 1, 0) < 1.0


def test_a_cpu_list_reads_as_sysfs_and_taskset_write_it():
    run_gpu = _load("run_gpu")
    assert run_gpu.cpu_list("2-5") == {2, 3, 4, 5}
    assert run_gpu.cpu_list("0,4-6\n") == {0, 4, 5, 6}
    assert run_gpu.cpu_list("7") == {7} and run_gpu.cpu_list("") == set()


def test_sequential_pairs_run_one_side_after_the_other_first_side_swapped(concurrent,
                                                                            monkeypatch, tmp_path):
    """$OBSERVER_SEQUENTIAL=1: a side starts only once the other has ended, and which side goes
    first alternates pair by pair; unset, both sides are running at the same moment."""
    import threading
    import time

    log: list[tuple[str, str]] = []
    running = {"n": 0, "most": 0}
    lock = threading.Lock()

    def side(entry, cmd, folder, env, gpu, tool, out, tag, cpus=None):
        with lock:
            running["n"] += 1
            running["most"] = max(running["most"], running["n"])
            log.append(("start", tag))
        time.sleep(0.05)
        with lock:
            running["n"] -= 1
        return {"code": 0, "gpu": gpu, "cpus": cpus, "tool": tool,
                "own": {"series_ms": [], "skip": 0}}

    monkeypatch.setattr(concurrent, "_side", side)
    entry = {"id": "x", "command": ["main.py"], "observer": {"capture": CAPTURE}}
    monkeypatch.setenv("OBSERVER_SEQUENTIAL", "1")
    for i in range(2):
        concurrent.pair(entry, tmp_path, {}, i, tmp_path, aa=False, gpus=(0, 0))
    assert running["most"] == 1
    assert [tag for _, tag in log] == ["tool0", "alone0", "alone1", "tool1"]
    monkeypatch.delenv("OBSERVER_SEQUENTIAL")
    running["most"] = 0
    concurrent.pair(entry, tmp_path, {}, 2, tmp_path, aa=False, gpus=(0, 0))
    assert running["most"] == 2


def test_a_pair_keeps_the_capture_cost_its_tool_side_measured(concurrent, tmp_path):
    """The tool side's own account of its hooks (meta's baseline.capture_cost) is read from its
    run folder, so a pair's ratio reads beside what the capture took in that process."""
    import json

    run = tmp_path / "runs" / "x" / "tool0" / "20261204-run"
    run.mkdir(parents=True)
    cost = {"hooks_ms": 2.0, "hook_calls": 60, "median_call_us": 31.2}
    (run / "meta.json").write_text(json.dumps({"baseline": {"capture_cost": cost}}))
    assert concurrent.capture_cost(tmp_path / "runs" / "x" / "tool0") == cost
    (run / "meta.json").write_text("{not json")
    assert concurrent.capture_cost(tmp_path / "runs" / "x" / "tool0") is None
    assert concurrent.capture_cost(tmp_path / "nothing") is None
