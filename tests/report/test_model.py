"""The typed summary: to_json() is the model's encoding, cached summaries are validated, and the
checked-in JSON Schema and TypeScript types match the model."""

import json
import math
import shlex
import shutil
import subprocess

import msgspec
import pytest
from paths import ROOT, TESTS

from jupyter_gpuprof.report import SUMMARY_SCHEMA_VERSION, analyze_path, run_summary
from jupyter_gpuprof.report.model import Summary, decode, from_builtins, to_builtins
from jupyter_gpuprof.report.schema import SCHEMA_FILE, schema_text
from jupyter_gpuprof.store import open_run

REAL = TESTS / "data" / "real"
EXPECTED = TESTS / "data" / "expected"
# summaries written by the dict-building report before the model existed, plus `warnings`
CASES = ["compute", "ddp_workload_comm"]


def _close(actual, expected, where="summary"):
    """Same keys, same JSON types, floats equal to 1e-9 relative (numpy builds may differ)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), where
        for k in expected:
            _close(actual[k], expected[k], f"{where}.{k}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            _close(a, e, f"{where}[{i}]")
    elif isinstance(expected, float):
        assert isinstance(actual, float) and math.isclose(actual, expected, rel_tol=1e-9), where
    else:
        assert type(actual) is type(expected) and actual == expected, where


def _summary(name, tmp_path):
    folder = tmp_path / name
    shutil.copytree(REAL / name, folder)  # analysing a run folder caches summary.json in it
    out = analyze_path(folder).to_json()
    out["source"]["path"] = None
    return out


@pytest.mark.parametrize("name", CASES)
def test_summary_equals_the_committed_one(name, tmp_path):
    _close(_summary(name, tmp_path), json.loads((EXPECTED / f"{name}.summary.json").read_text()))


def test_to_json_is_the_model_encoding(tmp_path):
    report = analyze_path(REAL / "ddp_workload_comm")
    model = report.summary()
    assert isinstance(model, Summary) and model.schema_version == SUMMARY_SCHEMA_VERSION
    assert report.to_json() == json.loads(msgspec.json.encode(model))
    assert decode(msgspec.json.encode(model)) == model
    assert report.to_json()["warnings"] == []
    report.ranks[1].info.warnings.append("3 events dropped: no timestamp")
    assert report.to_json()["warnings"] == ["rank 1: 3 events dropped: no timestamp"]


def test_non_finite_floats_encode_as_null():
    model = from_builtins(json.loads((EXPECTED / "compute.summary.json").read_text()))
    model.comm.overlap_pct = float("nan")
    model.steps.profiler_inflation = float("inf")
    out = to_builtins(model)
    assert out["comm"]["overlap_pct"] is None and out["steps"]["profiler_inflation"] is None


def test_decoding_rejects_a_summary_of_another_shape():
    good = json.loads((EXPECTED / "compute.summary.json").read_text())
    from_builtins(good)
    for broken in ({**good, "gpu": None}, {k: v for k, v in good.items() if k != "verdict"},
                   {**good, "steps": {**good["steps"], "n": "five"}}):
        with pytest.raises(msgspec.ValidationError):
            from_builtins(broken)


def test_run_summary_keeps_a_valid_cache_and_recomputes_an_invalid_one(tmp_path):
    folder = tmp_path / "compute"
    shutil.copytree(REAL / "compute", folder)
    run = open_run(folder)
    run.meta.status = "complete"
    run.write_meta()
    first = run_summary(run)
    cached = {**first, "source": {**first["source"], "path": "from the cache"}}
    (folder / "summary.json").write_text(json.dumps(cached))
    assert run_summary(run)["source"]["path"] == "from the cache"
    (folder / "summary.json").write_text(json.dumps({**cached, "gpu": "not a block"}))
    again = run_summary(run)
    assert again["gpu"] == first["gpu"] and again["source"]["path"] != "from the cache"
    assert json.loads((folder / "summary.json").read_text())["gpu"] == first["gpu"]


def test_checked_in_schema_matches_the_model():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "the summary model changed: run `python -m jupyter_gpuprof.report.schema` "
        "and `jlpm gen:types`, and commit both files")


def _json2ts_command() -> list[str]:
    """`jlpm gen:types` as an argument list, reading the schema from stdin, writing stdout."""
    script = json.loads((ROOT / "package.json").read_text())["scripts"]["gen:types"]
    args = shlex.split(script)
    assert args[0] == "json2ts"
    for flag in ("-i", "-o"):
        i = args.index(flag)
        del args[i:i + 2]
    cli = ROOT / "node_modules" / ".bin" / "json2ts"
    assert cli.exists(), "json-schema-to-typescript is not installed: run `jlpm install`"
    return [shutil.which("node") or "node", str(cli), *args[1:]]


def test_generated_typescript_matches_the_schema():
    made = subprocess.run(_json2ts_command(), input=schema_text(), capture_output=True,
                          text=True, cwd=SCHEMA_FILE.parent, timeout=120, check=True).stdout
    current = (ROOT / "src" / "generated" / "summary.ts").read_text(encoding="utf-8")
    assert current == made, "src/generated/summary.ts is stale: run `jlpm gen:types`"
