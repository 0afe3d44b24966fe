"""The report object and its JSON/text/HTML forms, as the CLI, magic and server see them."""

import json

import pytest
from scenarios import build, input_bound
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.trace import TraceError
from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.views.html import render_html

REQUIRED = {"schema_version", "steps", "gpu", "verdict", "findings"}


def test_json_schema_of_the_cli_and_summary(tmp_path):
    b, _ = build(input_bound)
    r = analyze_path(b.write(tmp_path / "x.pt.trace.json.gz"))
    j = json.loads(json.dumps(r.to_json()))
    assert REQUIRED <= set(j)
    assert {"n", "median_ms", "p95_ms"} <= set(j["steps"])
    assert {"busy_pct", "idle_pct"} <= set(j["gpu"])
    assert {"category", "summary"} <= set(j["verdict"])
    assert j["verdict"]["category"] == "input"
    f = j["findings"][0]
    assert {"id", "category", "evidence", "fix", "expected_gain_pct"} <= set(f)
    assert j["gpu"]["busy_pct"] + j["gpu"]["idle_pct"] == pytest.approx(100)


def test_result_object_tables(tmp_path):
    b, _ = build(input_bound)
    r = analyze_path(b.write(tmp_path / "x.json.gz"))
    for name in ("step_table", "ops", "kernels", "gaps", "transfers", "findings"):
        assert hasattr(getattr(r, name), "columns"), name
    assert r.findings.iloc[0]["category"] == "input"
    assert "VERDICT: input" in r.to_text()


def test_sibling_meta_supplies_the_baseline(tmp_path):
    b, _ = build(input_bound)
    b.write(tmp_path / "w.pt.trace.json.gz")
    (tmp_path / "w.meta.json").write_text(json.dumps({"step_ms_all": [20.0] * 7}))
    j = analyze_path(tmp_path / "w.pt.trace.json.gz").to_json()
    assert j["steps"]["source"] == "baseline" and j["steps"]["n"] == 7
    assert j["steps"]["median_ms"] == 20.0


def test_names_from_traces_are_escaped_in_html(tmp_path):
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    ext = b.op("<img src=x onerror=alert(1)>", 0.0, 10.0)
    b.kernel("<script>alert(2)</script>", 1.0, 20.0, 500.0, ext=ext)
    html = render_html(analyze_path(b.write(tmp_path / "x.json.gz")).to_json())
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html


def test_cpu_only_report_has_a_banner(tmp_path):
    b = TraceBuilder(gpu=False)
    b.step(1, 0.0, 100.0)
    b.op("aten::mm", 10.0, 50.0)
    r = analyze_path(b.write(tmp_path / "cpu.json.gz"))
    assert "GPU metrics unavailable" in r.to_text()
    assert "GPU metrics unavailable" in r._repr_html_()
    assert r.to_json()["gpu"]["available"] is False


def test_errors_name_the_path(tmp_path):
    with pytest.raises(TraceError, match="no such file"):
        analyze_path(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(TraceError, match="no trace files"):
        analyze_path(tmp_path / "empty")


def test_throughput_line_from_counted_flops(tmp_path):
    b, step_ms = build(input_bound)
    b.write(tmp_path / "w.pt.trace.json.gz")
    (tmp_path / "w.meta.json").write_text(json.dumps(
        {"step_ms_all": [10.0] * 5, "flops_per_step": 5e12}))
    r = analyze_path(tmp_path / "w.pt.trace.json.gz")
    f = r.to_json()["flops"]
    assert f["achieved_tflops"] == pytest.approx(500.0)  # 5 TFLOP in 10 ms
    assert f["mfu_pct"] == pytest.approx(100 * 500 / 989.4)  # bf16 on an H200
    assert "MFU 50.5%" in r.to_text()
