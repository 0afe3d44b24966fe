"""%%gpuprofile end to end in a real IPython shell on CPU."""

from __future__ import annotations

import importlib.util

import pytest
from capture_fixtures import nothing_left_installed, profiler_steps, trace_names  # noqa: F401
from IPython.testing import globalipapp

from jupyter_gpuprof.magics import NO_GPU_BANNER, has_top_level_loop
from jupyter_gpuprof.store import RunStore

HAVE_REPORT = importlib.util.find_spec("jupyter_gpuprof.report") is not None

SETUP = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
ds = torch.utils.data.TensorDataset(torch.randn(8 * 64, 16), torch.randint(0, 4, (8 * 64,)))
loader = torch.utils.data.DataLoader(ds, batch_size=8)
it = iter(loader)
calls = 0
def train_step(batch):
    global calls
    calls += 1
    x, y = batch
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
"""


@pytest.fixture(scope="module")
def ip():
    shell = globalipapp.start_ipython() or globalipapp.get_ipython()  # one app per process
    shell.run_line_magic("load_ext", "jupyter_gpuprof")
    return shell


@pytest.fixture
def fresh(ip, tmp_path):
    ip.run_cell(SETUP)
    ip.user_ns.pop("_gpuprof", None)
    return ip, tmp_path


def run_cell(ip, line, body):
    return ip.run_cell(f"%%gpuprofile {line}\n{body}")


def only_run(root):
    runs = RunStore(root).list()
    assert len(runs) == 1 and not runs[0].broken
    return runs[0]


def test_body_mode_end_to_end(fresh, capsys):
    ip, root = fresh
    res = run_cell(
        ip,
        f"--steps 6 --warmup 2 --wait 1 --prof-warmup 1 --active 2 --name mlp --runs-root {root}",
        "train_step(next(it))",
    )
    assert res.error_in_exec is None and res.error_before_exec is None
    assert ip.user_ns["calls"] == 2 + 6 + 4  # warm-up + baseline + profiler steps, nothing more
    run = only_run(root)
    assert run.id.endswith("-mlp")
    assert (run.path / "trace.json.gz").is_file() and (run.path / "meta.json").is_file()
    m = run.meta
    assert (
        m.status == "complete" and len(m.baseline["step_ms"]) == 6 and len(m.profiled_step_ms) == 2
    )
    assert m.settings["mode"] == "body" and m.code == "train_step(next(it))\n"
    names = trace_names(run.trace_paths()[0])
    assert profiler_steps(names) == 2 and names["forward"] == 2 and names["data"] == 2
    out = capsys.readouterr().out
    assert "baseline" in out and str(run.path) in out
    if not m.env["cuda_available"]:
        assert "GPU metrics unavailable" in out  # from the report, or our banner without one


def test_raising_cell_keeps_run_and_reraises_original(fresh):
    ip, root = fresh
    ip.run_cell("class Boom(Exception): pass\nerr = Boom('step 5 exploded')\nn = 0")
    res = run_cell(
        ip,
        # --body: the step count below is the body mode's (auto mode adds a first deciding run)
        f"--body --steps 4 --warmup 1 --active 2 --runs-root {root}",
        "n += 1\ntrain_step(next(it))\nif n == 7: raise err",
    )
    assert res.error_in_exec is ip.user_ns["err"]
    m = only_run(root).meta
    assert m.status == "failed" and m.error == "Boom: step 5 exploded"
    assert len(m.baseline["step_ms"]) == 4
    assert only_run(root).trace_paths(), "partial trace kept"
    partial = ip.user_ns["_gpuprof"]
    assert partial.to_json()["source"]["status"] == "failed"
    assert "Partial report" in partial.to_text()


def test_loop_mode_autodetected(fresh):
    ip, root = fresh
    res = run_cell(
        ip,
        f"--steps 5 --warmup 2 --active 3 --runs-root {root}",
        "for batch in loader:\n    train_step(batch)\n",
    )
    assert res.error_in_exec is None
    assert ip.user_ns["calls"] == 64  # the whole loop ran once, unmodified
    m = only_run(root).meta
    assert m.settings["mode"] == "loop" and m.status == "complete"
    assert len(m.baseline["step_ms"]) == 5 and len(m.profiled_step_ms) == 3


@pytest.mark.skipif(not HAVE_REPORT, reason="jupyter_gpuprof.report not written yet")
def test_loop_report_shown_when_capture_completes(fresh, capsys):
    ip, root = fresh
    ip.run_cell("class Stop(Exception): pass")
    body = (
        "for i, batch in enumerate(loader):\n"
        "    train_step(batch)\n"
        "    if i == 30: print('LOOP STILL RUNNING')\n"
        "    if i == 40: raise Stop('user stopped the loop')\n"
    )
    res = run_cell(ip, f"--steps 3 --warmup 1 --active 2 --runs-root {root}", body)
    assert type(res.error_in_exec).__name__ == "Stop"  # re-raised after the capture completed
    out = capsys.readouterr().out
    shown = out.index("gpuprofile: capture complete")
    assert shown < out.index("LOOP STILL RUNNING")
    assert out.count("gpuprofile: capture complete") == 1 and "_gpuprof" in ip.user_ns
    assert only_run(root).meta.status == "complete"  # the capture itself finished fine


def test_body_flag_forces_body_mode(fresh):
    ip, root = fresh
    res = run_cell(
        ip,
        f"--body --steps 2 --warmup 0 --wait 0 --prof-warmup 0 --active 1 --runs-root {root}",
        "for _ in range(2):\n    train_step(next(it))\n",
    )
    assert res.error_in_exec is None and ip.user_ns["calls"] == 2 * 3
    m = only_run(root).meta
    assert m.settings["mode"] == "body"
    assert m.flops_per_step is None and m.flops_error.startswith("no warm-up step")


def test_analysis_failure_is_one_line_and_run_kept(fresh, capsys, monkeypatch):
    if not HAVE_REPORT:
        pytest.skip("jupyter_gpuprof.report not written yet")
    import jupyter_gpuprof.report as report

    def broken(run):
        raise RuntimeError("analysis exploded")

    monkeypatch.setattr(report, "analyze_run", broken)
    ip, root = fresh
    res = run_cell(
        ip, f"--steps 2 --warmup 1 --active 1 --runs-root {root}", "train_step(next(it))"
    )
    assert res.error_in_exec is None
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if "analysis failed" in ln]
    path = only_run(root).path
    assert lines == [
        f"gpuprofile: analysis failed (RuntimeError: analysis exploded); run kept at {path}"
    ]
    assert only_run(root).meta.status == "complete"


@pytest.mark.skipif(not HAVE_REPORT, reason="jupyter_gpuprof.report not written yet")
def test_report_in_namespace(fresh, capsys):
    ip, root = fresh
    res = run_cell(
        ip, f"--steps 4 --warmup 1 --active 2 -o rep -q --runs-root {root}", "train_step(next(it))"
    )
    assert res.error_in_exec is None
    rep = ip.user_ns["rep"]
    assert rep.verdict is not None and len(rep.ops) > 0
    assert "<" in rep._repr_html_() and repr(rep)
    assert (only_run(root).path / "summary.json").is_file()
    if not only_run(root).meta.env["cuda_available"]:
        assert NO_GPU_BANNER in capsys.readouterr().out  # -q: no report shown, so we say it


def test_bad_arguments_do_not_create_runs(fresh):
    ip, root = fresh
    res = run_cell(ip, f"--active 0 --runs-root {root}", "train_step(next(it))")
    assert isinstance(res.error_in_exec, ValueError)
    assert RunStore(root).list() == []


@pytest.mark.parametrize(
    "src, loop",
    [
        ("train_step(next(it))", False),
        ("for b in loader:\n    train_step(b)", True),
        ("while True:\n    break", True),
        ("with torch.autocast('cpu'):\n    for b in loader:\n        train_step(b)", True),
        ("x = [train_step(b) for b in loader]", False),
        ("def f():\n    for b in loader:\n        pass", False),
        ("this is not python", False),
    ],
)
def test_has_top_level_loop(src, loop):
    assert has_top_level_loop(src) is loop
