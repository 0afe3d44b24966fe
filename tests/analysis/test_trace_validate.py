"""A real H200 trace with one field broken: the event is dropped and counted, never judged."""

import gzip
import json
import warnings
from pathlib import Path

import pytest
from paths import TESTS
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace
from jupyter_gpuprof.analysis.trace_validate import MAX_DROPPED_SHARE
from jupyter_gpuprof.cli import EXIT_ERROR, main
from jupyter_gpuprof.report import analyze_path

REAL = TESTS / "data" / "real" / "compute" / "trace.json.gz"


def _doc() -> dict:
    return json.loads(gzip.decompress(REAL.read_bytes()))


def _kernels(doc: dict) -> list[dict]:
    return [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]


def _write(doc: dict, tmp_path: Path) -> Path:
    p = tmp_path / "broken.json"
    p.write_text(json.dumps(doc))
    return p


def _sane(summary: dict) -> None:
    """Numbers a broken trace must never produce."""
    gpu, steps = summary["gpu"], summary["steps"]
    assert 0.0 <= gpu["busy_pct"] <= 100.0 and 0.0 <= gpu["idle_pct"] <= 100.0
    assert 0.0 <= gpu["busy_pct_real"] <= 100.0
    assert steps["median_ms"] > 0 and steps["p95_ms"] >= steps["median_ms"]
    assert gpu["available"]


def _break_kernels(doc: dict, n: int, how) -> None:
    for e in _kernels(doc)[:n]:
        how(e)


CASES = {
    "no ts": (lambda e: e.pop("ts"), "no timestamp"),
    "negative dur": (lambda e: e.update(dur=-abs(e["dur"]) - 1), "negative duration"),
    "no dur": (lambda e: e.pop("dur"), "no duration"),
    "dur string": (lambda e: e.update(dur="12"), "`dur` of the wrong type"),
    "dur null": (lambda e: e.update(dur=None), "`dur` of the wrong type"),
    "name int": (lambda e: e.update(name=5), "`name` of the wrong type"),
    "args list": (lambda e: e.update(args=[1]), "`args` of the wrong type"),
    "dur 1e308": (lambda e: e.update(dur=1e308), "duration longer than a day or not finite"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_one_broken_field_drops_and_counts_those_events(tmp_path, case, capsys):
    how, reason = CASES[case]
    doc = _doc()
    n_kernels = len(_kernels(doc))
    _break_kernels(doc, 3, how)
    path = _write(doc, tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow on the way
        trace = load_trace(path)
        report = analyze_path(path)
    assert trace.info.n_events_dropped == 3
    assert trace.info.warnings == [f"3 events dropped: {reason}"]
    assert len(trace.of("kernel")) == n_kernels - 3 and trace.has_gpu
    summary = report.to_json()
    assert summary["warnings"] == [f"3 events dropped: {reason}"]
    _sane(summary)
    assert "3 invalid event(s) of the trace dropped" in summary["verdict"]["reasons"]
    assert main(["analyze", str(path)]) == 0
    assert f"!! Trace: 3 events dropped: {reason}" in capsys.readouterr().out


def test_dropped_events_lower_the_confidence(tmp_path):
    doc = _doc()
    clean = analyze_path(_write(doc, tmp_path)).verdict.confidence
    _break_kernels(doc, 1, CASES["negative dur"][0])
    broken = analyze_path(_write(doc, tmp_path)).verdict.confidence
    order = ["low", "medium", "high"]
    assert clean != "low" and order.index(broken) == order.index(clean) - 1


@pytest.mark.parametrize("case", ["negative dur", "no dur", "dur string"])
def test_too_much_dropped_is_a_one_line_error(tmp_path, case, capsys):
    doc = _doc()
    _break_kernels(doc, len(_kernels(doc)), CASES[case][0])  # every kernel
    assert main(["analyze", str(_write(doc, tmp_path))]) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "too much is missing to judge" in err and CASES[case][1] in err


def test_the_refusal_share_is_the_named_constant(tmp_path):
    b = TraceBuilder()
    for i in range(10):
        b.step(i, 100.0 * i, 90.0)
    doc = b.doc()
    steps = doc["traceEvents"]
    n_ok = int(len(steps) * MAX_DROPPED_SHARE)  # exactly at the share: still read
    for e in steps[:n_ok]:
        e["dur"] = -1.0
    assert load_trace(_write(doc, tmp_path)).info.n_events_dropped == n_ok
    steps[n_ok]["dur"] = -1.0
    with pytest.raises(ValueError, match="too much is missing"):
        load_trace(_write(doc, tmp_path))


def test_exact_busy_time_without_the_dropped_kernel(tmp_path):
    b = TraceBuilder()
    for i in range(4):
        s = 1000.0 * i
        b.step(i, s, 1000.0)
        for j in range(5):
            b.kernel("k", s + 10 + 100 * j, s + 20 + 100 * j, 50.0)
    doc = b.doc()
    _kernels(doc)[0]["dur"] = -5e6  # would make the busy time hugely negative
    a = analyze(load_trace(_write(doc, tmp_path)))
    assert a.info.warnings == ["1 event dropped: negative duration"]
    assert a.real.gpu_busy_ms == pytest.approx((19 * 50.0) / 1e3 / a.n_steps)


def test_timestamp_far_from_the_trace_is_dropped(tmp_path):
    doc = _doc()
    _kernels(doc)[0]["ts"] = 1e300
    summary = analyze_path(_write(doc, tmp_path)).to_json()
    assert summary["warnings"] == [
        "1 event dropped: timestamp more than a day away from the rest of the trace"]
    _sane(summary)


def test_a_utf8_bom_is_skipped_with_a_warning(tmp_path):
    p = tmp_path / "bom.json"
    p.write_bytes(b"\xef\xbb\xbf" + gzip.decompress(REAL.read_bytes()))
    t = load_trace(p)
    assert len(t.of("kernel")) == len(_kernels(_doc()))
    assert t.info.warnings[0].startswith("the file starts with a UTF-8 byte-order mark")
    assert t.info.n_events_dropped == 0


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_tokens_are_named_with_their_place(tmp_path, token, capsys):
    text = json.dumps(_doc(), indent=1)
    at = text.index('"dur": ') + len('"dur": ')
    end = at + len(text[at:].split(",")[0].split("\n")[0])
    p = tmp_path / "nan.json"
    p.write_text(text[:at] + token + text[end:])
    line = text[:at].count("\n") + 1
    assert main(["analyze", str(p)]) == EXIT_ERROR
    err = capsys.readouterr().err.strip()
    assert f"a bare {token.lstrip('-')} at byte" in err and f"(line {line:,})" in err
    assert "truncated" not in err and "\n" not in err


def test_a_wrongly_typed_header_keeps_the_events(tmp_path):
    doc = _doc()
    doc["deviceProperties"] = 5
    t = load_trace(_write(doc, tmp_path))
    assert len(t.of("kernel")) == len(_kernels(_doc())) and t.info.gpu_name is None
    assert t.info.warnings == ["header fields of the wrong type ignored (device properties, rank)"]


def test_each_rank_reports_its_own_warnings(tmp_path):
    src = REAL.parent.parent / "ddp_workload_comm"
    for rank in (0, 1):
        doc = json.loads(gzip.decompress((src / f"trace.rank{rank}.json.gz").read_bytes()))
        if rank == 1:
            _break_kernels(doc, 2, CASES["no dur"][0])
        (tmp_path / f"trace.rank{rank}.json.gz").write_bytes(gzip.compress(
            json.dumps(doc).encode()))
    assert analyze_path(tmp_path).to_json()["warnings"] == ["rank 1: 2 events dropped: no duration"]
