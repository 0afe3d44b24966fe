"""The memory acceptance benchmark's comparisons (benchmarks/memory_acceptance_gpu.py): the
errors and bars it prints are computed from its raw JSON the way the acceptance states them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location(
        "memory_acceptance_gpu", ROOT / "benchmarks" / "memory_acceptance_gpu.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _fix(fix_id, saves, time_ms=None, title=None):
    return {"id": fix_id, "title": title or fix_id, "saves_bytes": saves, "time_ms": time_ms}


def _model():
    """A recorded model result: kinds summing to 10.2 GB against a plain peak of 10 GB."""
    kinds = [{"kind": "parameters", "bytes_at_peak": 1_000_000_000},
             {"kind": "saved_activations", "bytes_at_peak": 8_000_000_000},
             {"kind": "temporaries", "bytes_at_peak": 1_200_000_000}]
    fixes = [_fix("micro_batches", 4_600_000_000, None, "2 micro-batches with gradient "
                  "accumulation"), _fix("checkpointing", 6_000_000_000, 30.0),
             _fix("expandable_segments", 1_000_000_000, 0.0)]
    return {
        "capture": {"memory": {"over_step": {"kinds": kinds, "fixes": fixes}},
                    "steps": {"median_ms": 101.0}, "meta_max_memory_allocated": 10_100_000_000},
        "capture_off": {"steps": {"median_ms": 100.0}},
        "plain": {"max_memory_allocated": 10_000_000_000, "max_memory_reserved": 12_000_000_000,
                  "median_ms": 100.0,
                  "history": {"on_ms": [104.0, 112.0, 105.0], "off_ms": [100.0, 90.0, 101.0],
                              "recorded": True}},
        "fixes": {
            "micro_batches": {"max_memory_allocated": 5_000_000_000,
                              "max_memory_reserved": 6_000_000_000, "median_ms": 110.0},
            "checkpointing": {"max_memory_allocated": 4_000_000_000,
                              "max_memory_reserved": 5_000_000_000, "median_ms": 125.0},
            "expandable_segments": {"max_memory_allocated": 10_000_000_000,
                                    "max_memory_reserved": 10_500_000_000, "median_ms": 100.0},
            "autocast": {"oom": "CUDA out of memory"},
        },
    }


def test_error_is_relative_to_the_measured_figure(bench):
    assert bench.error_pct(110, 100) == pytest.approx(10.0)
    assert bench.error_pct(90, 100) == pytest.approx(-10.0)
    assert bench.error_pct(5, -10) == pytest.approx(150.0)  # a fix that grew the peak
    assert bench.error_pct(None, 100) is None
    assert bench.error_pct(1, 0) is None


def test_kinds_sum_against_the_plain_peak(bench):
    row = bench.peak_row(_model())
    assert row["kinds_sum"] == 10_200_000_000
    assert row["error_pct"] == pytest.approx(2.0)
    assert row["ok"]
    off = _model()
    off["plain"]["max_memory_allocated"] = 9_600_000_000  # +6.25 %: over the 5 % bar
    assert not bench.peak_row(off)["ok"]


def test_each_fix_predicted_against_measured(bench):
    rows = {r["fix"]: r for r in bench.fix_rows(_model())}
    split = rows["micro_batches"]
    assert split["measured_bytes"] == 5_000_000_000
    assert split["error_pct"] == pytest.approx(-8.0)
    assert split["ok"]
    ckpt = rows["checkpointing"]
    assert ckpt["error_pct"] == pytest.approx(0.0)
    assert ckpt["measured_ms"] == pytest.approx(25.0) and ckpt["predicted_ms"] == 30.0
    exp = rows["expandable_segments"]  # reserved memory, not allocated
    assert exp["measured_bytes"] == 1_500_000_000
    assert exp["error_pct"] == pytest.approx(-100 / 3)
    assert not exp["ok"]
    auto = rows["autocast"]
    assert auto["predicted_bytes"] is None and auto["measured_bytes"] is None
    assert auto["oom"] == "CUDA out of memory" and not auto["ok"]


def test_history_overhead_from_block_medians(bench):
    row = bench.overhead_row(_model())
    assert row["on_ms"] == 105.0 and row["off_ms"] == 100.0
    assert row["overhead_pct"] == pytest.approx(5.0) and row["ok"]
    assert row["baseline_pct"] == pytest.approx(1.0)
    cpu = _model()
    cpu["plain"]["history"]["recorded"] = False  # no CUDA: the blocks measured nothing
    assert not bench.overhead_row(cpu)["ok"]


def test_the_split_a_fix_names_is_the_one_applied(bench):
    fix = _fix("micro_batches", 1, title="4 micro-batches with gradient accumulation")
    assert bench.split_k(fix) == 4
    spec, conf = bench.variant_spec({"model": "gpt2", "batch": 8}, "micro_batches", 4)
    assert spec["micro_batches"] == 4 and conf == ""
    spec, conf = bench.variant_spec({"model": "gpt2"}, "expandable_segments")
    assert conf == "expandable_segments:True" and spec == {"model": "gpt2"}
    with pytest.raises(ValueError):
        bench.split_k(_fix("micro_batches", 1, title="micro-batches"))


def test_table_prints_every_fix_and_the_oom(bench):
    results = {"models": {"gpt2": _model()},
               "oom": {"cap_bytes": 8_000_000_000, "batch": 16, "fix_title": "4 micro-batches",
                       "capture": {"text": "Out of memory: top 3 …"},
                       "fixed": {"max_memory_allocated": 7_000_000_000}}}
    text = bench.table(results)
    for fix_id in ("micro_batches", "checkpointing", "expandable_segments", "autocast"):
        assert fix_id in text
    assert "+2.0 %" in text and "-8.0 %" in text
    assert "FITS" in text
    results["oom"]["fixed"] = {"oom": "CUDA out of memory"}
    assert "does NOT fit" in bench.table(results)


def test_corpus_fix_options_and_lines(bench):
    from memory_acceptance_corpus import corpus_lines, fix_args

    split = _fix("micro_batches", 4_000_000_000, title="2 micro-batches with gradient accumulation")
    assert fix_args("nanogpt-fp32", split) == ["--batch_size=4", "--gradient_accumulation_steps=8"]
    assert fix_args("imagenet-resnet50-dummy", split) == ["-b", "32"]
    assert fix_args("nanogpt-fp32", _fix("autocast", 1)) == ["--dtype=bfloat16"]
    memory = {"over_step": {"kinds": [{"kind": "parameters", "bytes_at_peak": 9_500_000_000}]}}
    res = {"nanogpt-fp32": {
        "tool": {"code": 0, "max_memory_allocated": 10_000_000_000, "memory": memory},
        "offered": [split],
        "fixes": {"micro_batches": {"args": ["-b", "32"], "max_memory_allocated": 5_000_000_000}}}}
    text = "\n".join(corpus_lines(res))
    assert "-5.0 %" in text  # 9.5 GB attributed against the run's 10 GB
    assert "-20.0 %" in text  # 4 GB predicted against 5 GB measured


def test_the_recorded_h200_run(bench):
    """The first H200 run (tests/data/memory/acceptance_h200.json): its errors as the docs state."""
    import json

    results = json.loads((ROOT / "tests/data/memory/acceptance_h200.json").read_text())
    gpt2 = results["models"]["gpt2"]
    assert abs(bench.peak_row(gpt2)["error_pct"]) < 0.001
    rows = {r["fix"]: r for r in bench.fix_rows(gpt2)}
    assert rows["micro_batches"]["error_pct"] == pytest.approx(8.3, abs=0.05)
    assert rows["checkpointing"]["error_pct"] == pytest.approx(-32.5, abs=0.05)
    llama = {r["fix"]: r for r in bench.fix_rows(results["models"]["llama"])}
    assert llama["set_to_none"]["error_pct"] == pytest.approx(0.0, abs=0.05)
    assert bench.overhead_row(gpt2)["overhead_pct"] == pytest.approx(0.10, abs=0.005)
    text = bench.table(results)
    assert "does NOT fit" in text and "8 micro-batches: peak 5.476 GB, fits" in text


def test_rescore_prices_the_kept_histories_again(tmp_path):
    """memory_rescore.py: the OOM's split priced by the current code from the kept run folder
    (here the recorded OOM history), against the splits measured under the cap."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import memory_rescore

    data = ROOT / "tests" / "data" / "memory"
    (tmp_path / "memory_acceptance.json").write_text((data / "acceptance_h200.json").read_text())
    run = tmp_path / "runs" / "oom" / "r1"
    run.mkdir(parents=True)
    (run / "memory_history.json.gz").write_bytes((data / "oom.snapshot.json.gz").read_bytes())
    results = memory_rescore.rescore(memory_rescore.load_results(tmp_path), tmp_path)
    oom = results["oom"]
    fixes = oom["capture"]["memory"]["oom"]["fixes"]
    assert fixes[0]["title"].startswith("16 ")  # the recorded failure: 1.3 of 6 layers run
    assert memory_rescore.oom_verdict(oom).endswith("not measured")
    oom["larger_splits"].append({"k": 16, "max_memory_allocated": 3_000_000_000})
    assert "measured: fits" in memory_rescore.oom_verdict(oom)


def test_rescore_of_the_second_h200_run_from_its_committed_histories(bench, tmp_path):
    """The second H200 run's raw results (docs/evidence) re-priced from its own histories
    (tests/data/memory: gpt2_12l, llama_8l, oom_layers): every saving row within the bar, the
    GPT-2's checkpointing included (-27.3 % as run, the MLP taken for the layer), and a B part
    whose post-mortem offered no split (no fix_title) scored without a crash."""
    import json

    import memory_rescore

    data = ROOT / "tests" / "data" / "memory"
    run2 = json.loads((ROOT / "docs" / "evidence" / "memory_acceptance_h200_run2.json").read_text())
    for part, raw in run2["parts"].items():
        (tmp_path / f"memory_acceptance_{part}.json").write_text(json.dumps(raw))
    for name, case in (("gpt2", "gpt2_12l"), ("llama", "llama_8l"), ("oom", "oom_layers")):
        run = tmp_path / "runs" / name / "r1"
        run.mkdir(parents=True)
        snapshot = (data / f"{case}.snapshot.json.gz").read_bytes()
        (run / "memory_history.json.gz").write_bytes(snapshot)
    results = memory_rescore.rescore(memory_rescore.load_results(tmp_path), tmp_path)
    for model in ("gpt2", "llama"):
        rows = {r["fix"]: r for r in bench.fix_rows(results["models"][model])}
        assert all(r["ok"] for r in rows.values()), (model, rows)
        assert "checkpointing" in rows
    assert results["oom"]["fix_title"] is None
    assert memory_rescore.oom_verdict(results["oom"]) == (
        "recommended now: 8 micro-batches; not measured")
