"""%ncu / %%ncu in a real IPython shell, with a fake ncu: results, storage, one-line errors."""

from __future__ import annotations

import importlib.util

import pytest
from IPython.testing import globalipapp
from paths import TESTS

from jupyter_gpuprof.ncu import NcuResults, attach_ncu, load_ncu
from jupyter_gpuprof.ncu.magic import split_line
from jupyter_gpuprof.store import RunStore

HERE = TESTS
FAKE = str(HERE / "fakes" / "ncu")
HAVE_REPORT = importlib.util.find_spec("jupyter_gpuprof.report") is not None


@pytest.fixture(scope="module")
def ip():
    # one global test shell per session, whichever test module started it
    shell = globalipapp.start_ipython() or globalipapp.get_ipython()
    shell.run_line_magic("load_ext", "jupyter_gpuprof")
    return shell


@pytest.fixture
def env(ip, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_NCU_SCENARIO", "ok")
    monkeypatch.delenv("FAKE_NCU_RAW", raising=False)
    for magics in ip.magics_manager.registry.values():  # forget other tests' %%gpuprofile runs
        if hasattr(magics, "last_run"):
            monkeypatch.setattr(magics, "last_run", None)
    monkeypatch.delitem(ip.user_ns, "_gpuprof", raising=False)
    return tmp_path


def test_registered_with_the_extension(ip, capsys):
    assert "ncu" in ip.magics_manager.magics["line"]
    assert "ncu" in ip.magics_manager.magics["cell"]
    ip.run_line_magic("ncu", "--help")
    assert "--clock-control" in capsys.readouterr().out


def test_cell_under_ncu_stores_gzipped_report_and_csvs(ip, env, capsys):
    ip.run_cell_magic(
        "ncu", f"--ncu {FAKE} --runs-root {env} --nvtx train_step -q", "x = 1\nprint('cell ran', x)"
    )
    out = capsys.readouterr().out
    assert "%ncu: 8 kernels profiled" in out and "cell ran" not in out.split("%ncu:")[-1]
    res = ip.user_ns["_ncu"]
    assert isinstance(res, NcuResults) and len(res.kernels) == 8
    assert res.info["mode"] == "cell" and res.info["filter"]["launch_count"] == 10
    assert res.info["filter"]["nvtx_include"] == ["train_step"]
    run = RunStore(env).list()[0]
    files = sorted(p.name for p in (run.path / "ncu").iterdir())
    assert any(f.endswith(".ncu-rep.gz") for f in files)
    assert any(f.endswith(".raw.csv.gz") for f in files) and any(
        f.endswith(".details.csv.gz") for f in files
    )
    assert len(load_ncu(run).kernels) == 8  # reopens from the run folder alone
    assert run.meta.settings == {"mode": "ncu"} and "print('cell ran'" in run.meta.code


def test_script_after_double_dash(ip, env, capsys, tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print('step')\n")
    ip.run_line_magic(
        "ncu", f"--ncu {FAKE} --runs-root {env} -k gemm -c 2 -q -o prof -- python {script}"
    )
    assert "%ncu: 8 kernels profiled" in capsys.readouterr().out
    assert ip.user_ns["prof"].info["filter"]["kernel_regex"] == "gemm"


@pytest.mark.parametrize(
    "scenario,needle",
    [("perm", "ERR_NVGPUCTRPERM"), ("driver", "nvidia-smi"), ("nokernels_pushpop", "push/pop")],
)
def test_errors_are_one_line_not_tracebacks(ip, env, capsys, monkeypatch, scenario, needle):
    monkeypatch.setenv("FAKE_NCU_SCENARIO", scenario)
    ip.run_cell_magic("ncu", f"--ncu {FAKE} --runs-root {env}", "pass")
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("%ncu:")]
    assert len(lines) == 1 and needle in lines[0]


def test_cell_raising_is_reported(ip, env, capsys):
    ip.run_cell_magic("ncu", f"--ncu {FAKE} --runs-root {env}", "raise ValueError('bad shape')")
    out = capsys.readouterr().out
    assert "%ncu: the profiled code failed (exit 1): ValueError: bad shape" in out


def test_replay_needs_a_run(ip, env, capsys):
    ip.run_line_magic("ncu", f"--ncu {FAKE} --runs-root {env / 'empty'}")
    assert "run %%gpuprofile first" in capsys.readouterr().out


def test_missing_ncu_is_one_line(ip, env, capsys):
    ip.run_cell_magic("ncu", f"--ncu {env / 'nope'} --runs-root {env}", "pass")
    out = capsys.readouterr().out
    assert out.startswith("%ncu: ncu not found") and "JUPYTER_GPUPROF_NCU" in out


def test_bad_arguments_raise_usage_error(ip):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError):
        ip.run_line_magic("ncu", "--top notanumber")


def test_split_line():
    assert split_line("--top 2 -- python train.py --lr 1e-3") == (
        ["--top", "2"],
        ["python", "train.py", "--lr", "1e-3"],
    )
    assert split_line("--set basic") == (["--set", "basic"], [])


@pytest.mark.skipif(not HAVE_REPORT, reason="report module absent")
def test_attach_to_report_adds_ncu_table_and_next_steps(ip, env):
    from jupyter_gpuprof.report import analyze_trace

    report = analyze_trace(HERE / "data" / "real" / "compute" / "trace.json.gz")
    ip.run_cell_magic("ncu", f"--ncu {FAKE} --runs-root {env} -q", "pass")
    before = len(report.advice.findings)
    attach_ncu(report, ip.user_ns["_ncu"])
    assert len(report.ncu) == 8 and "verdict" in report.ncu.columns
    assert len(report.advice.findings) > before
    attach_ncu(report, ip.user_ns["_ncu"])  # attaching again replaces, never duplicates
    assert len([f for f in report.advice.findings if f.id.startswith("ncu-")]) == len(
        ip.user_ns["_ncu"].findings()
    )
