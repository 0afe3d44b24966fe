"""`jupyter gpuprof run|analyze` on CPU: unmodified scripts, exit codes, one-line errors."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from ddp_script import DDP
from paths import ROOT

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import RunStore

REPO = ROOT
HAVE_REPORT = importlib.util.find_spec("jupyter_gpuprof.report") is not None

SCRIPT = """
import sys
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
for i in range({steps}):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    if i == {fail_at}:
        raise RuntimeError("diverged at step " + str(i))
print("trained", {steps})
sys.exit({code})
"""

FLAGS = ["--steps", "4", "--warmup", "1", "--wait", "1", "--prof-warmup", "1", "--active", "2"]
NEEDED = 1 + 1 + 4 + 4


def script(tmp_path, steps=NEEDED + 3, fail_at=-1, code=0) -> Path:
    p = tmp_path / "train.py"
    p.write_text(SCRIPT.format(steps=steps, fail_at=fail_at, code=code))
    return p


def only_run(root):
    runs = RunStore(root).list()
    assert len(runs) == 1 and not runs[0].broken
    return runs[0]


def test_run_script_end_to_end(tmp_path, capfd):
    root = tmp_path / "runs"
    rc = main(
        [
            "run",
            "--runs-root",
            str(root),
            *FLAGS,
            "--",
            sys.executable,
            str(script(tmp_path, code=3)),
        ]
    )
    assert rc == 3  # the command's own exit status
    run = only_run(root)
    assert run.id.endswith("-train")
    m = run.meta
    assert m.status == "complete", m.error
    assert len(m.baseline["step_ms"]) == 4 and len(m.profiled_step_ms) == 2
    assert m.settings["mode"] == "script" and "train.py" in m.code
    with gzip.open(run.trace_paths()[0]) as f:
        names = {e.get("name") for e in json.load(f)["traceEvents"]}
    assert {"forward", "backward", "optimizer"} <= names
    out, err = capfd.readouterr()
    assert f"trained {NEEDED + 3}" in out and "run complete" in err


def test_run_script_that_raises(tmp_path, capfd):
    root = tmp_path / "runs"
    rc = main(
        [
            "run",
            "--runs-root",
            str(root),
            *FLAGS,
            "--",
            sys.executable,
            str(script(tmp_path, fail_at=NEEDED - 2)),
        ]
    )
    assert rc == 1
    m = only_run(root).meta
    assert m.status == "failed" and m.error == f"RuntimeError: diverged at step {NEEDED - 2}"
    assert only_run(root).trace_paths()
    assert "Traceback" in capfd.readouterr().err  # the script's own traceback is untouched


def test_run_command_without_training(tmp_path):
    root = tmp_path / "runs"
    assert main(["run", "--runs-root", str(root), "--", sys.executable, "-c", "print('hi')"]) == 0
    m = only_run(root).meta
    assert m.status == "failed" and m.error.startswith("no training steps seen")


def test_run_chains_existing_sitecustomize(tmp_path, monkeypatch, capfd):
    mine = tmp_path / "site"
    mine.mkdir()
    (mine / "sitecustomize.py").write_text("import os\nos.environ['CHAINED'] = 'yes'\n")
    monkeypatch.setenv("PYTHONPATH", str(mine))
    root = tmp_path / "runs"
    code = (
        "import os, sys; print('chained=' + os.environ.get('CHAINED', 'no'));"
        "print('torch' in sys.modules)"
    )
    assert main(["run", "--runs-root", str(root), "--", sys.executable, "-c", code]) == 0
    out = capfd.readouterr().out
    assert "chained=yes" in out
    assert "False" in out  # a process that never imports torch does not pay for it


def test_run_needs_a_command(tmp_path, capsys):
    assert main(["run", "--runs-root", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith("gpuprof: nothing to run")
    assert main(["run", "--runs-root", str(tmp_path), "--", "no-such-program-xyz"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[-1].startswith("gpuprof: could not start no-such-program-xyz")


def test_analyze_missing_file_is_one_line_exit_2(tmp_path, capsys):
    missing = tmp_path / "nope.json.gz"
    assert main(["analyze", str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip().splitlines() == [f"gpuprof: no such file or folder: {missing}"]


def test_analyze_corrupt_trace_is_one_line_exit_2(tmp_path, capsys):
    if not HAVE_REPORT:
        pytest.skip("jupyter_gpuprof.report not written yet")
    bad = tmp_path / "broken.json.gz"
    bad.write_bytes(gzip.compress(b'{"traceEvents": [ {"ph": "X", '))
    assert main(["analyze", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken.json.gz" in err[0] and "Traceback" not in err[0]


def test_module_entry_point_exit_code(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "jupyter_gpuprof", "analyze", str(tmp_path / "x.json")],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


@pytest.mark.skipif(not HAVE_REPORT, reason="jupyter_gpuprof.report not written yet")
def test_analyze_run_folder_json(tmp_path, capsys):
    root = tmp_path / "runs"
    assert (
        main(["run", "--runs-root", str(root), *FLAGS, "--", sys.executable, str(script(tmp_path))])
        == 0
    )
    capsys.readouterr()
    run = only_run(root)
    assert main(["analyze", "--json", str(run.path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert isinstance(data, dict) and data
    assert json.loads((run.path / "summary.json").read_text()) == data


def test_help_mentions_both_commands(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "analyze" in out and "run" in out


def test_importing_the_package_does_not_import_torch():
    code = (
        "import sys, jupyter_gpuprof, jupyter_gpuprof.store, jupyter_gpuprof.cli;"
        "import jupyter_gpuprof.magics;"
        "assert 'torch' not in sys.modules, 'torch imported';"
        "assert callable(jupyter_gpuprof.profile) and callable(jupyter_gpuprof.step);"
        "print(jupyter_gpuprof.__version__)"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip()


INNER = """
import torch
from torch import nn
import jupyter_gpuprof
model = nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
with jupyter_gpuprof.profile("inner", steps=3, warmup=1, wait=0, prof_warmup=0, active=2):
    for i in range(12):
        opt.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
"""


def test_script_profile_block_takes_over_the_cli_run(tmp_path):
    p = tmp_path / "inner.py"
    p.write_text(INNER)
    root = tmp_path / "runs"
    assert main(["run", "--runs-root", str(root), "--", sys.executable, str(p)]) == 0
    m = only_run(root).meta  # one folder: the CLI's, filled by the script's profile() block
    assert m.status == "complete", m.error
    assert len(m.baseline["step_ms"]) == 3 and len(m.profiled_step_ms) == 2




def test_run_torchrun_writes_one_trace_per_rank(tmp_path):
    p = tmp_path / "ddp.py"
    p.write_text(DDP)
    root = tmp_path / "runs"
    # --standalone picks a free rendezvous port: the default 29500 may be taken on a busy host
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
           str(p)]
    assert main(["run", "--runs-root", str(root), *FLAGS, "--", *cmd]) == 0
    run = only_run(root)
    assert [t.name for t in run.trace_paths()] == ["trace.rank0.json.gz", "trace.rank1.json.gz"]
    assert sorted(run.rank_metas()) == [0, 1]
    m = run.meta  # merged by the CLI: rank 0's timings, the job's world size
    assert m.status == "complete", m.error
    assert m.world_size == 2 and len(m.baseline["step_ms"]) == 4


def test_calibration_prints_the_record_table_and_json(tmp_path, capsys):
    from jupyter_gpuprof.store.calibration import append_entries

    assert main(["calibration", "--runs-root", str(tmp_path)]) == 0
    assert "no tries recorded" in capsys.readouterr().out
    base = {"category": "memory", "workload": "w", "conditions": None, "error": None,
            "run_id": "r", "source": "script", "created": "t", "significant": True}
    append_entries(tmp_path, [
        {**base, "fix": "compile", "gpu_name": "NVIDIA H200", "predicted_gain_pct": 20.0,
         "measured_gain_pct": 14.0},
        {**base, "fix": "compile", "gpu_name": "NVIDIA H200", "predicted_gain_pct": 10.0,
         "measured_gain_pct": 24.0},
        {**base, "fix": "graphs", "category": "launch", "gpu_name": None,
         "predicted_gain_pct": 5.0, "measured_gain_pct": None, "significant": None,
         "error": "RecursionError"}])
    assert main(["calibration", "--runs-root", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["fix", "GPU", "tries", "signif.", "crashed", "mean", "|err|",
                                "worst", "bias"]
    assert lines[2].split() == ["compile", "NVIDIA", "H200", "2", "2", "0", "10.0", "14.0",
                                "-4.0"]
    assert lines[3].split() == ["graphs", "no", "GPU", "1", "0", "1", "-", "-", "-"]
    assert main(["calibration", "--runs-root", str(tmp_path), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["fix"], r["gpu_name"], r["n_tries"], r["mean_abs_error_pts"],
             r["mean_bias_pts"]) for r in rows] == [("compile", "NVIDIA H200", 2, 10.0, -4.0),
                                                    ("graphs", None, 1, None, None)]


def test_analyze_imports_only_what_a_text_report_needs():
    """`analyze` pays for no notebook, server, plotting or capture code (issue 25: startup is
    part of the 300 MB trace's time)."""
    code = (
        "import sys; from jupyter_gpuprof.cli import main;"
        "main(['analyze', 'tests/data/real/ddp2_heavy1/trace.rank0.json.gz']);"
        "heavy = ('torch', 'IPython', 'ipywidgets', 'anywidget', 'plotly', 'matplotlib',"
        " 'jupyter_server', 'tornado', 'ipykernel');"
        "ours = ('server', 'capture.session', 'views.widget', 'views.html', 'ncu', 'magics');"
        "print('LOADED', [m for m in sys.modules if m.split('.')[0] in heavy"
        " or any(m.startswith('jupyter_gpuprof.' + o) for o in ours)])"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1] == "LOADED []"
