"""Whole-trace sanity checks on a real H200 trace broken the ways issue 24 found: each is read
with a warning the report shows, or refused in one line with exit status 2, never believed."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from paths import TESTS

from jupyter_gpuprof.analysis.trace import load_trace
from jupyter_gpuprof.cli import EXIT_ERROR, main
from jupyter_gpuprof.report import analyze_path

REAL = TESTS / "data" / "real" / "compute" / "trace.json.gz"
_DOC = json.loads(gzip.decompress(REAL.read_bytes()))


def _doc() -> dict[str, Any]:
    return copy.deepcopy(_DOC)


def _write(doc: object, tmp_path: Path, name: str = "broken.json", raw: str | None = None
           ) -> Path:
    p = tmp_path / name  # no sibling meta: the trace alone is judged
    p.write_text(raw if raw is not None else json.dumps(doc))
    return p


def _timed(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in doc["traceEvents"] if isinstance(e.get("ts"), (int, float))]


def _one_line_error(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert main(["analyze", str(path), *args]) == EXIT_ERROR
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and "\n" not in err and "Traceback" not in err
    assert "Error:" not in err  # a message, not an exception's name
    return err


# --- duplicated events -------------------------------------------------------------------------


def test_every_event_duplicated_is_read_once_and_said(tmp_path, capsys):
    """Issue 24: every event written twice doubled the kernel time per step (8.86 → 17.71 ms)."""
    clean = analyze_path(_write(_doc(), tmp_path, "clean.json")).to_json()
    doc = _doc()
    n_kept = len(load_trace(REAL).events) + len(load_trace(REAL).memory)
    doc["traceEvents"] = doc["traceEvents"] * 2
    path = _write(doc, tmp_path)
    twice = analyze_path(path).to_json()
    assert clean["gpu"]["busy_ms_per_step"] == pytest.approx(8.86, abs=0.005)
    assert twice["gpu"]["busy_ms_per_step"] == clean["gpu"]["busy_ms_per_step"]
    assert [k["ms_per_step"] for k in twice["kernels"]] == [
        k["ms_per_step"] for k in clean["kernels"]]
    assert twice["steps"]["median_ms"] == clean["steps"]["median_ms"]
    said = f"{n_kept:,} duplicated events read once"
    assert [w for w in twice["warnings"] if said in w]  # in the model, once
    assert main(["analyze", str(path)]) == 0
    assert f"!! Trace: {said}" in capsys.readouterr().out  # and the text report shows it


def test_a_few_duplicated_kernels_are_counted_exactly(tmp_path):
    doc = _doc()
    kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
    doc["traceEvents"] += [dict(k) for k in kernels[:3]]
    t = load_trace(_write(doc, tmp_path))
    assert len(t.of("kernel")) == len(kernels)
    assert t.info.warnings[0].startswith("3 duplicated events read once")


def test_two_kernels_differing_in_one_field_are_both_kept(tmp_path):
    doc = _doc()
    k = next(e for e in doc["traceEvents"] if e.get("cat") == "kernel")
    doc["traceEvents"].append({**k, "args": {**k["args"], "correlation": 10**9}})
    t = load_trace(_write(doc, tmp_path))
    assert len(t.of("kernel")) == len([e for e in _DOC["traceEvents"]
                                       if e.get("cat") == "kernel"]) + 1
    assert t.info.warnings == []


# --- timestamps --------------------------------------------------------------------------------


def test_all_timestamps_zero_is_a_one_line_error(tmp_path, capsys):
    doc = _doc()
    for e in _timed(doc):
        e["ts"] = 0
    err = _one_line_error(_write(doc, tmp_path), capsys)
    assert "start at the same instant (ts 0)" in err and "re-export" in err


def test_timestamps_running_backwards_are_a_one_line_error(tmp_path, capsys):
    doc = _doc()
    for e in _timed(doc):
        e["ts"] = -e["ts"]  # the clock negated: the last step now comes first
    err = _one_line_error(_write(doc, tmp_path), capsys)
    assert "the timestamps do not run forward" in err and "ProfilerStep#" in err


def test_steps_shuffled_in_time_are_a_one_line_error(tmp_path, capsys):
    doc = _doc()
    steps = sorted((e for e in doc["traceEvents"] if e.get("cat") == "user_annotation"
                    and str(e.get("name")).startswith("ProfilerStep#")), key=lambda e: e["ts"])
    steps[0]["ts"], steps[1]["ts"] = steps[1]["ts"], steps[0]["ts"]
    assert "do not run forward" in _one_line_error(_write(doc, tmp_path), capsys)


def test_negative_timestamps_shifted_wholesale_are_read_and_said(tmp_path):
    clean = analyze_path(_write(_doc(), tmp_path, "clean.json")).to_json()
    doc = _doc()
    last = max(e["ts"] for e in _timed(doc))
    for e in _timed(doc):
        e["ts"] -= last + 1.0
    shifted = analyze_path(_write(doc, tmp_path)).to_json()
    assert shifted["gpu"]["busy_ms_per_step"] == pytest.approx(clean["gpu"]["busy_ms_per_step"])
    assert shifted["steps"]["median_ms"] == pytest.approx(clean["steps"]["median_ms"])
    (said,) = shifted["warnings"]
    assert "with a negative timestamp" in said and "relative to the first event" in said


# --- empty traces ------------------------------------------------------------------------------


@pytest.mark.parametrize("events", ["empty", "missing"])
def test_a_trace_without_events_is_a_one_line_error_not_a_report(tmp_path, capsys, events):
    doc = _doc()
    if events == "empty":
        doc["traceEvents"] = []
    else:
        del doc["traceEvents"]
    err = _one_line_error(_write(doc, tmp_path), capsys)
    assert "nothing" in err


# --- durations ---------------------------------------------------------------------------------


def test_an_absurd_duration_drops_its_event_and_says_so(tmp_path):
    doc = _doc()
    next(e for e in doc["traceEvents"] if e.get("cat") == "kernel")["dur"] = 2 * 86_400e6
    s = analyze_path(_write(doc, tmp_path)).to_json()
    assert s["warnings"] == ["1 event dropped: duration longer than a day or not finite"]
    assert 0 <= s["gpu"]["busy_pct"] <= 100


# --- ids out of range --------------------------------------------------------------------------


@pytest.mark.parametrize("field,value", [("correlation", 2**64 + 5), ("External id", 2**63),
                                         ("device", -(2**63) - 1), ("stream", 10**40)])
def test_ids_past_int64_drop_their_events_as_out_of_range(tmp_path, field, value):
    doc = _doc()
    for k in [e for e in doc["traceEvents"] if e.get("cat") == "kernel"][:3]:
        k["args"][field] = value
    t = load_trace(_write(doc, tmp_path))
    assert t.info.warnings == [f"3 events dropped: `args.{field}` out of range"]


@pytest.mark.parametrize("value", ["0x" + "f" * 40, "9" * 40])
def test_an_id_written_as_text_past_int64_reads_as_no_id(tmp_path, value):
    doc = _doc()
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel":
            e["args"]["stream"] = value
    t = load_trace(_write(doc, tmp_path))
    assert (t.of("kernel")["stream"] == -1).all()


def test_huge_ids_everywhere_are_one_line_not_an_overflow(tmp_path, capsys):
    doc = _doc()
    for e in doc["traceEvents"]:
        if isinstance(e.get("args"), dict) and "correlation" in e["args"]:
            e["args"]["correlation"] = 2**64 + 5
    err = _one_line_error(_write(doc, tmp_path), capsys)
    assert "`args.correlation` out of range" in err and "OverflowError" not in err


def test_a_rank_past_any_job_is_ignored(tmp_path):
    doc = _doc()
    doc["distributedInfo"] = {"rank": 10**30, "world_size": 2**64}
    t = load_trace(_write(doc, tmp_path))
    assert t.info.rank is None and t.info.world_size is None


# --- nesting -----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["args", "header"])
def test_json_nested_past_the_limit_is_a_one_line_error(tmp_path, capsys, where):
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps(_doc())
    text = (text.replace('"args": {', f'"args": {{"x": {deep}, ', 1) if where == "args"
            else text[:-1] + f', "x": {deep}}}')
    err = _one_line_error(_write(None, tmp_path, raw=text), capsys)
    assert "JSON nested deeper than" in err and "RecursionError" not in err


def test_nesting_within_the_limit_is_read(tmp_path):
    text = json.dumps(_doc()).replace('"args": {', '"args": {"x": ' + "[" * 200 + "]" * 200
                                      + ", ", 1)
    assert len(load_trace(_write(None, tmp_path, raw=text)).events) == len(load_trace(REAL).events)


# --- device properties -------------------------------------------------------------------------


GARBLED = "device properties ignored where they are not numbers or names (device 0 `{}` is"
UNTYPED = "header fields of the wrong type ignored (device properties, rank)"


@pytest.mark.parametrize("field,value,said", [
    ("totalGlobalMem", '"x"', GARBLED.format("totalGlobalMem")),
    ("computeMajor", '"x"', GARBLED.format("computeMajor")),
    ("id", "[1]", GARBLED.format("id")),
    ("totalGlobalMem", "1e400", UNTYPED),  # past a float: the whole header is untyped
])
def test_garbage_device_properties_are_said_not_raised(tmp_path, capsys, field, value, said):
    """Issue 24: "invalid literal for int() with base 10: 'x'" instead of a report."""
    doc = _doc()
    was = f'"{field}": {json.dumps(doc["deviceProperties"][0][field])}'
    path = _write(None, tmp_path, raw=json.dumps(doc).replace(was, f'"{field}": {value}', 1))
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"!! Trace: {said}" in out and "invalid literal" not in out


def test_device_properties_as_digit_strings_are_read_as_numbers(tmp_path):
    doc = _doc()
    doc["deviceProperties"][0]["totalGlobalMem"] = str(doc["deviceProperties"][0][
        "totalGlobalMem"])
    t = load_trace(_write(doc, tmp_path))
    assert t.info.devices[0]["totalGlobalMem"] == _DOC["deviceProperties"][0]["totalGlobalMem"]
    assert t.info.warnings == []


# --- no false alarms on the committed corpus ---------------------------------------------------

DATA = TESTS / "data"
#: every committed trace (data/memory holds allocator snapshots, not traces)
CORPUS = sorted(p.relative_to(DATA).as_posix() for p in DATA.rglob("*.json.gz")
                if p.relative_to(DATA).parts[0] != "memory")


def test_the_corpus_is_every_committed_trace():
    """Recorded runs, H200 scenarios and the third-party traces: 73 files when this was written."""
    assert len(CORPUS) >= 73
    assert {c.split("/")[0] for c in CORPUS} == {"corpus", "real", "wild"}


@pytest.mark.parametrize("rel", CORPUS)
def test_no_sanity_check_fires_on_a_sound_committed_trace(rel):
    """Every check runs on every committed trace (real runs, old torch, ROCm, MTIA, range
    profiler, vLLM/SGLang): none refuses it or adds a warning, and the baseline a recorded
    run measured is plausible for its own profiled steps."""
    from jupyter_gpuprof.analysis.baseline_check import check_baseline
    from jupyter_gpuprof.analysis.steps import step_table

    path = DATA / rel
    trace = load_trace(path)
    assert trace.info.warnings == []
    meta = path.parent / "meta.json"
    base = (json.loads(meta.read_text()).get("baseline", {}).get("step_ms") if meta.exists()
            else None)
    if base and path.name == "trace.json.gz":
        steps, window = step_table(trace)
        profiled = (float(steps["step_us"].median()) if len(steps) else window.dur_us) / 1e3
        check_baseline(base, profiled)
