"""The third-party trace corpus and its independent counter: the yardstick the reader is held to.

``tests/data/wild/truth.json`` is what reader tests compare against, so the counter that wrote
it (``benchmarks/wild_truth.py``, stdlib only) gets exact-arithmetic tests here on tiny traces,
and the corpus is checked to be complete: every file has a source, a license and a count.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

import pytest
from paths import ROOT

WILD = ROOT / "tests" / "data" / "wild"
MANIFEST = ROOT / "benchmarks" / "wild_corpus_manifest.json"
RECOUNT_BELOW_BYTES = 100_000  # recount the small files on every run; the big ones cost seconds


def _load_counter():
    spec = importlib.util.spec_from_file_location(
        "wild_truth", ROOT / "benchmarks" / "wild_truth.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


wild_truth = _load_counter()


def _write(tmp_path: Path, doc, name: str = "t.json.gz", raw: str | None = None) -> str:
    path = tmp_path / name
    text = raw if raw is not None else json.dumps(doc)
    with gzip.open(path, "wt") as f:
        f.write(text)
    return str(path)


def _x(cat, name, ts, dur, **args):
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 0,
        "tid": 1,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


# --- the counter -------------------------------------------------------------------------------


def test_busy_is_the_union_of_gpu_work_over_the_first_to_last_gpu_event(tmp_path):
    events = [
        _x("kernel", "k1", 100, 10, device=0),
        _x("kernel", "k2", 105, 10, device=0),  # overlaps k1: counted once
        _x("gpu_memcpy", "Memcpy HtoD", 120, 10, device=0),
        _x("cpu_op", "aten::mm", 0, 500),  # host time does not widen the GPU span
    ]
    r = wild_truth.measure_file(_write(tmp_path, {"traceEvents": events}))
    assert r["kernels"] == 2
    assert r["gpu_span_ms"] == pytest.approx(0.030)
    assert r["gpu_busy_pct"] == pytest.approx(100 * 25 / 30, abs=0.01)


def test_old_torch_capitalised_categories_in_a_truncated_json_array_are_counted(tmp_path):
    events = [
        _x("Operator", "ProfilerStep#1", 0, 100),
        _x("Runtime", "cudaLaunchKernel", 10, 5, correlation=7),
        _x("Kernel", "k", 20, 40, device=0, correlation=7),
        _x("Memset", "Memset (Device)", 70, 10, device=0),
    ]
    text = json.dumps(events)[:-1] + ","  # Chrome format lets the array lose its last ']'
    r = wild_truth.measure_file(_write(tmp_path, None, raw=text))
    assert r["form"] == "array"
    assert (r["kernels"], r["gpu_work_events"]) == (1, 2)
    assert r["step_source"] == "ProfilerStep" and r["steps"] == 1
    assert r["launch_calls"] == {"cudaLaunchKernel": 1}
    assert r["busy_in_steps_pct"] == pytest.approx(50.0)  # 50 µs of GPU work in a 100 µs step


def test_devices_are_kept_apart_and_the_busiest_one_is_the_headline(tmp_path):
    events = [_x("kernel", "a", 0, 10, device=0), _x("kernel", "b", 0, 100, device=1)]
    events.append(_x("kernel", "c", 150, 50, device=1))
    r = wild_truth.measure_file(_write(tmp_path, {"traceEvents": events}))
    assert set(r["devices"]) == {"0", "1"}
    assert r["devices"]["0"]["gpu_busy_pct"] == 100.0
    assert r["gpu_busy_pct"] == pytest.approx(75.0)  # device 1: 150 µs busy over 200 µs


def test_steps_fall_back_to_optimizer_steps_then_to_a_repeating_gpu_range(tmp_path):
    opt = [_x("cpu_op", f"Optimizer.step#SGD.step#{i}", i * 100, 10) for i in range(3)]
    r = wild_truth.measure_file(_write(tmp_path, {"traceEvents": opt}, "a.json.gz"))
    assert (r["step_source"], r["steps"]) == ("Optimizer.step", 3)
    ranges = [_x("gpu_user_annotation", "decode", i * 100, 50) for i in range(4)]
    ranges.append(_x("gpu_user_annotation", "once", 0, 400))
    r = wild_truth.measure_file(_write(tmp_path, {"traceEvents": ranges}, "b.json.gz"))
    assert (r["step_source"], r["steps"]) == ("gpu_user_annotation", 4)
    r = wild_truth.measure_file(_write(tmp_path, {"traceEvents": ranges[-1:]}, "c.json.gz"))
    assert (r["step_source"], r["steps"]) == (None, 0)


def test_vendor_comes_from_the_runtime_not_from_the_compute_capability(tmp_path):
    # MI250 reports computeMajor 9, minor 0: the same figures as an H100
    props = [{"name": "AMD Radeon Graphics", "computeMajor": 9, "computeMinor": 0, "warpSize": 64}]
    events = [
        _x("cuda_runtime", "hipLaunchKernel", 0, 5),
        _x("cuda_runtime", "hipDeviceSynchronize", 9, 1),
    ]
    r = wild_truth.measure_file(
        _write(tmp_path, {"deviceProperties": props, "traceEvents": events})
    )
    assert r["vendor"] == "AMD"
    assert r["device_properties"][0]["warp_size"] == 64
    assert r["sync_calls"] == {"hipDeviceSynchronize": 1}


def test_one_time_runtime_calls_are_listed_longest_first(tmp_path):
    events = [
        _x("cuda_runtime", "cudaFree", 0, 60_000),
        _x("cuda_runtime", "cudaDeviceGetStreamPriorityRange", 0, 29_900_000),
        _x("cuda_runtime", "cudaLaunchKernel", 0, 49_000),  # under the 50 ms line
    ]
    r = wild_truth.measure_file(_write(tmp_path, {"traceEvents": events}))
    assert r["one_time_calls_ms"] == [
        [29900.0, "cudaDeviceGetStreamPriorityRange"],
        [60.0, "cudaFree"],
    ]


def test_files_that_are_not_traces_say_so_instead_of_raising(tmp_path):
    r = wild_truth.measure_file(_write(tmp_path, {"nodes": []}, "et.json.gz"))
    assert r["form"] == "not-a-trace"
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert wild_truth.measure_file(str(bad))["form"] == "unreadable"


def test_a_folder_is_one_job_only_when_ranks_are_distinct_and_world_sizes_agree():
    def f(rank, world):
        return {"rank": rank, "world_size": world, "device_properties": []}

    assert wild_truth.folder_summary({"a": f(0, 2), "b": f(1, 2)})["one_job"]
    assert not wild_truth.folder_summary({"a": f(0, 2), "b": f(1, 8)})["one_job"]
    assert not wild_truth.folder_summary({"a": f(0, 2), "b": f(0, 2)})["one_job"]
    assert not wild_truth.folder_summary({"a": f(None, None), "b": f(None, None)})["one_job"]


# --- the corpus --------------------------------------------------------------------------------


def _manifest():
    return json.loads(MANIFEST.read_text())


def _corpus_files():
    return {str(p.relative_to(WILD)) for p in map(Path, wild_truth.trace_files(str(WILD)))}


def test_every_committed_trace_is_in_the_manifest_and_the_readme():
    committed = {m["dest"] for m in _manifest() if m["committed"]}
    assert committed == _corpus_files()
    readme = (WILD / "README.md").read_text()
    missing = [dest for dest in committed if f"`{dest}`" not in readme]
    assert not missing, f"list these in tests/data/wild/README.md: {missing}"


def test_every_source_folder_carries_its_license():
    sources = {dest.split("/")[0] for dest in _corpus_files()}
    assert sources == {"hta", "kineto", "param", "tracelens"}
    for source in sources:
        assert (WILD / source / "LICENSE").stat().st_size > 500, source


def test_the_committed_corpus_stays_under_20_mb():
    total = sum(p.stat().st_size for p in WILD.rglob("*") if p.is_file())
    assert total <= 20 * 2**20


def test_truth_json_counts_every_committed_trace_and_is_current():
    truth = json.loads((WILD / "truth.json").read_text())["files"]
    assert set(truth) == _corpus_files()
    for rel in sorted(_corpus_files()):
        if (WILD / rel).stat().st_size < RECOUNT_BELOW_BYTES:
            fresh = json.loads(json.dumps(wild_truth.measure_file(str(WILD / rel))))
            assert fresh == truth[rel], (
                f"{rel}: run benchmarks/wild_truth.py --write tests/data/wild"
            )
