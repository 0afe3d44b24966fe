"""Nothing printed to a terminal acts on it: escape sequences in names, run names, source lines
and try errors are made visible (terminal.py), on every path that writes to one."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import pytest
from paths import ROOT, TESTS

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.report import analyze_path
from jupyter_gpuprof.terminal import say, visible

#: clear screen, retitle the window (OSC 0 ended by BEL), a forged hyperlink (OSC 8 ended by
#: ST), an 8-bit CSI, carriage return, DEL, NUL
PAYLOADS = ["\x1b[2J", "\x1b]0;pwned\x07", "\x1b]8;;http://x.invalid\x1b\\link\x1b]8;;\x1b\\",
            "\x9b31m", "\rover", "\x7f", "\x00"]
HOSTILE = "".join(PAYLOADS)
#: what a terminal would act on: C0 controls but newline and tab, DEL, C1
RAW_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
TRACE = TESTS / "data" / "real" / "compute" / "trace.json.gz"
RUN = TESTS / "data" / "corpus" / "mingpt-adder-tries"
#: the modules that write to a terminal: every write goes through `terminal.say`
WRITERS = ["cli.py", "launcher/run.py", "tries/script.py", "tries/cell.py", "magics.py",
           "integrations/callback_session.py"]


def _clean(text: str) -> None:
    assert not RAW_CONTROL.findall(text), RAW_CONTROL.findall(text)


def test_visible_shows_each_control_and_keeps_text_newlines_and_tabs():
    assert visible(HOSTILE) == ("\\x1b[2J\\x1b]0;pwned\\x07\\x1b]8;;http://x.invalid\\x1b\\link"
                                "\\x1b]8;;\\x1b\\\\x9b31m\\x0dover\\x7f\\x00")
    kept = "step 9.4 ms\n\tµs — “quoted” 数 ✓"
    assert visible(kept) == kept
    assert visible(visible(HOSTILE)) == visible(HOSTILE)  # idempotent: safe to apply twice


def test_say_writes_visible_text_to_stdout_or_stderr(capsys):
    say("name:", HOSTILE)
    say("error:", HOSTILE, err=True)
    out, err = capsys.readouterr()
    _clean(out + err)
    assert out == f"name: {visible(HOSTILE)}\n" and err == f"error: {visible(HOSTILE)}\n"


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recorded run whose name, source lines and a try's error carry escape sequences."""
    folder = tmp_path_factory.mktemp("runs") / "run"
    shutil.copytree(RUN, folder)
    meta = json.loads((folder / "meta.json").read_text())
    meta["name"] = f"adder{HOSTILE}"
    for c in meta["callsites"]:
        c["code"] += HOSTILE
    meta["tries"][0]["error"] = f"boom{HOSTILE}"
    (folder / "meta.json").write_text(json.dumps(meta))
    return folder


def test_the_text_report_shows_run_names_source_lines_and_try_errors_visibly(hostile_run):
    text = analyze_path(hostile_run).to_text()  # the text view itself, not only the CLI
    _clean(text)
    assert f"jupyter_gpuprof report — adder{visible(HOSTILE)}" in text
    assert f"crashed: boom{visible(HOSTILE)}" in text
    assert "Your code: mingpt/model.py:57  " in text and text.count(visible(HOSTILE)) >= 4


def test_the_headline_view_is_visible_too(hostile_run):
    _clean(analyze_path(hostile_run).headline())


def test_analyze_prints_hostile_kernel_and_op_names_visibly(tmp_path, capsys):
    import gzip

    doc = json.loads(gzip.decompress(TRACE.read_bytes()))
    for e in doc["traceEvents"]:
        if e.get("cat") in ("kernel", "cpu_op"):
            e["name"] = f"{e['name']}{HOSTILE}"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    assert main(["analyze", str(path)]) == 0
    out = capsys.readouterr().out
    _clean(out)
    assert "\\x1b[2J" in out
    assert main(["analyze", "--json", str(path)]) == 0  # JSON escapes them itself, and stays JSON
    raw = capsys.readouterr().out
    _clean(raw)
    summary = json.loads(raw)
    assert summary["kernels"][0]["name"].endswith(HOSTILE)
    # every name the summary ships keeps the whole payload, its trailing NUL too (numpy's
    # fixed-width strings drop it: the kernel table and the op shapes once did)
    names = [s for s in _strings(summary) if "pwned" in s]
    assert names and all(s.endswith(HOSTILE) or HOSTILE in s for s in names)
    assert not [s for s in names if s.endswith(HOSTILE[:-1])]


def _strings(node):
    """Every string in a JSON document."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)


def test_an_error_line_naming_a_hostile_path_is_visible(tmp_path, capsys):
    name = "missing\x1b[2J\x1b]0;pwned\x07\x9b31m\x7f.json"  # what a file name can hold
    assert main(["analyze", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    _clean(err)
    assert visible(name) in err


def test_compare_prints_hostile_run_names_visibly(hostile_run, capsys):
    assert main(["compare", str(hostile_run), str(hostile_run)]) == 0
    out = capsys.readouterr().out
    _clean(out)
    assert visible(HOSTILE) in out


@pytest.mark.parametrize("module", WRITERS)
def test_every_terminal_writer_goes_through_say(module):
    """A bare print() or sys.stdout/stderr.write() in a module that writes to a terminal would
    bypass the sanitizer: there is none."""
    tree = ast.parse((ROOT / "jupyter_gpuprof" / module).read_text())
    bare = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and (
        (isinstance(n.func, ast.Name) and n.func.id == "print")
        or (isinstance(n.func, ast.Attribute) and n.func.attr == "write"
            and isinstance(n.func.value, ast.Attribute) and n.func.value.attr in (
                "stdout", "stderr")))]
    assert bare == [], f"{module}: print/write at lines {bare}: use terminal.say"


def test_grouping_codes_keep_a_names_trailing_nul():
    """The kernel table's and the op shapes' grouping give each group its name back whole."""
    import pandas as pd

    from jupyter_gpuprof.analysis.kernels import codes_in_order, kernel_table

    names = pd.Series([f"op{HOSTILE}", "b", None], dtype=object)
    codes, text = codes_in_order(names)
    assert list(text[codes]) == [f"op{HOSTILE}", "b", "nan"]
    rows = pd.DataFrame({"name": [f"k{HOSTILE}", "k2"], "kind": ["gemm", "other"],
                         "tensor_core": [False, False], "dur_us": [5.0, 1.0], "dtype": ["", ""]})
    assert kernel_table(rows)["name"].iloc[0] == f"k{HOSTILE}"
