"""The user's own lines behind findings: call sites from one warm-up step, patterns, in-use."""

from __future__ import annotations

import inspect

import torch
from tracebuilder import TraceBuilder

import jupyter_gpuprof
from jupyter_gpuprof.advice.findings import Finding
from jupyter_gpuprof.advice.fixes import MEMORY, SYNC
from jupyter_gpuprof.advice.patterns import GRAD_NORM_FIX, in_use, prune_fix, refine
from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import load_trace
from jupyter_gpuprof.capture.callsites import DATA_NEXT, CallSites
from jupyter_gpuprof.store import RunStore

SMALL = dict(steps=2, warmup=2, wait=1, prof_warmup=1, active=2)


class GradNormTrainer:
    """A step that logs every parameter's gradient norm with .item() (the GPT-2 case)."""

    def __init__(self) -> None:
        torch.manual_seed(0)
        self.model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 2))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.log: list[float] = []

    def step(self) -> None:
        self.opt.zero_grad()
        self.model(torch.randn(4, 8)).sum().backward()
        for p in self.model.parameters():
            self.log.append(p.grad.norm().item())  # the line the report must name
        self.opt.step()


def _item_line() -> int:
    src, first = inspect.getsourcelines(GradNormTrainer.step)
    return first + next(i for i, ln in enumerate(src) if ".item()" in ln)


def test_capture_records_the_item_line_in_the_run(tmp_path):
    t = GradNormTrainer()
    with jupyter_gpuprof.profile("gradnorm", runs_root=tmp_path, **SMALL):
        for _ in range(14):
            t.step()
    (run,) = RunStore(tmp_path).list()
    sites = run.meta.callsites
    item = [s for s in sites if s["call"] == "item"]
    assert item and item[0]["file"] == __file__ and item[0]["line"] == _item_line()
    assert ".item()" in item[0]["code"] and item[0]["calls"] == 4  # 4 parameters, one step
    assert any(s["call"] == "norm" and s["line"] == _item_line() for s in sites)
    assert not torch.overrides._get_current_function_mode_stack()  # the mode is gone


def test_data_loader_next_and_library_frames():
    sites = CallSites()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(4, 2)),
                                         batch_size=2)
    sites.begin()
    try:
        for (x,) in loader:  # the DataLoader line
            torch.nn.functional.relu(x)
    finally:
        sites.end()
    got = {(s["call"], s["line"]) for s in sites.result()}
    this = inspect.currentframe().f_lineno  # type: ignore[union-attr]
    assert (DATA_NEXT, this - 5) in got and ("relu", this - 4) in got
    # nothing inside torch or this package is named as the user's line
    assert all(s["file"] == __file__ for s in sites.result())


def _analysis(tmp_path, extra_ops=()):
    """Two steps, each: 10 parameters' vector norms and .item() calls, plus `extra_ops`."""
    b = TraceBuilder()
    for k in range(2):
        t0 = k * 1000.0
        b.step(k + 1, t0, 1000.0)
        mm = b.op("aten::mm", t0 + 1, 20.0)
        b.kernel("gemm", t0 + 2, t0 + 30, 200.0, ext=mm)
        for i in range(10):
            n = b.op("aten::linalg_vector_norm", t0 + 300 + i * 50, 5.0)
            b.kernel("reduce_kernel", t0 + 301 + i * 50, t0 + 310 + i * 50, 2.0, ext=n)
            b.op("aten::item", t0 + 320 + i * 50, 20.0)
            b.sync(t0 + 321 + i * 50, 15.0)
        for name in extra_ops:
            op = b.op(name, t0 + 900, 10.0)
            b.kernel("multi_tensor_apply_kernel", t0 + 901, t0 + 905, 30.0, ext=op)
    return analyze(load_trace(b.write(tmp_path / "t.json.gz")))


SITES = [
    {"call": "item", "file": "In[4]", "line": 9, "code": "loss_log.append(loss.item())",
     "calls": 1, "cell": True},
    {"call": "norm", "file": "In[4]", "line": 12, "code": "norms = [p.grad.norm().item() ...",
     "calls": 10, "cell": True},
    {"call": "item", "file": "In[4]", "line": 12, "code": "norms = [p.grad.norm().item() ...",
     "calls": 10, "cell": True},
    {"call": "linear", "file": "In[4]", "line": 5, "code": "out = model(x)", "calls": 2,
     "cell": True},
]


def _sync_finding():
    return Finding("host-syncs", "sync", "The host waits for the GPU inside the step",
                   "10 sync calls per step", SYNC, 1.0, 10.0)


def test_per_parameter_item_logging_becomes_one_batched_norm_at_the_users_line(tmp_path):
    a = _analysis(tmp_path)
    (f, where), = refine([_sync_finding()], a, SITES)
    assert f.id == "per-parameter-item" and "_foreach_norm" in f.fix
    assert f.data["item_per_step"] == 10.0 and f.data["norm_per_step"] == 10.0
    assert where is not None and (where["file"], where["line"], where["call"]) == ("In[4]", 12,
                                                                                   "item")
    assert f.fix.startswith("# In[4]:12: norms = [p.grad.norm().item()")
    assert f.fix.endswith(GRAD_NORM_FIX)
    # without the call sites the pattern still reads from the trace, just without a line
    (g, none), = refine([_sync_finding()], a, None)
    assert g.id == "per-parameter-item" and none is None


def test_a_few_items_keep_the_generic_sync_fix(tmp_path):
    a = _analysis(tmp_path)
    a.ops.loc[a.ops["name"] == "aten::linalg_vector_norm", "calls_per_step"] = 1.0
    (f, where), = refine([_sync_finding()], a, SITES)
    assert f.id == "host-syncs" and f.fix.endswith(SYNC)
    assert where is not None and where["line"] == 12  # the most-called sync site


def test_fixes_never_recommend_what_the_trace_shows_in_use(tmp_path):
    a = _analysis(tmp_path, extra_ops=("aten::_fused_adamw_",))
    assert in_use(a) == {"fused_adamw"}
    fix = prune_fix(MEMORY, in_use(a))
    assert "fused=True" not in fix and "torch.compile" in fix
    assert fix.endswith("# already in use in this step: fused adamw")
    assert prune_fix(MEMORY, set()) == MEMORY
    memory = Finding("unfused-memory-bound", "memory", "Unfused", "e", MEMORY, 1.0, 5.0)
    f, where = refine([memory], a, SITES)[0]
    assert "fused=True" not in f.fix and where is not None and where["call"] == "linear"


def test_the_summary_of_a_run_names_the_line(tmp_path):
    from runs_fixtures import real_run

    from jupyter_gpuprof.report import analyze_path

    folder = real_run(tmp_path, "20261129-191322-sync", "sync", callsites=SITES)
    s = analyze_path(folder).to_json()
    sync = next(f for f in s["findings"] if f["category"] == "sync")
    assert sync["where"] == {"file": "In[4]", "line": 12, "code": SITES[2]["code"],
                             "call": "item", "calls": 10, "cell": True}
    assert sync["fix"].startswith("# In[4]:12: ")
    from jupyter_gpuprof.views.html import render_html
    from jupyter_gpuprof.views.text import render_text

    assert "Your code: In[4]:12" in render_text(s)
    assert "Your code: <code>In[4]:12</code>" in render_html(s)


def test_the_pattern_is_reported_even_below_the_sync_rules_threshold(tmp_path):
    a = _analysis(tmp_path)
    (f, where), = refine([], a, SITES)
    assert f.id == "per-parameter-item" and f.category == "sync" and where["line"] == 12
    assert f.cost_ms == round(a.real.idle_by_cause_ms["sync"], 3)


def test_host_findings_point_at_the_busiest_host_only_op(tmp_path):
    b = TraceBuilder()
    b.step(1, 0.0, 1000.0)
    b.op("aten::to", 10.0, 600.0)  # host-only: launches nothing
    mm = b.op("aten::mm", 700.0, 10.0)
    b.kernel("gemm", 701.0, 705.0, 100.0, ext=mm)
    a = analyze(load_trace(b.write(tmp_path / "t.json.gz")))
    host = Finding("host-work", "host", "Host-side work", "e", "fix", 1.0, 5.0)
    sites = [{"call": "to", "file": "train.py", "line": 3, "code": "x = x.to(torch.float32)",
              "calls": 100, "cell": False},
             {"call": "linear", "file": "train.py", "line": 4, "code": "y = lin(x)",
              "calls": 1, "cell": False}]
    (f, where), = refine([host], a, sites)
    assert where is not None and (where["file"], where["line"]) == ("train.py", 3)


def test_a_gpuprofile_cell_is_named_with_the_line_the_notebook_shows(monkeypatch):
    import linecache
    from types import SimpleNamespace

    from jupyter_gpuprof.capture import callsites

    body = "x = batch()\nnorms = [p.norm().item() for p in ps]\n"
    name = "/tmp/ipykernel_1/123.py"
    linecache.cache[name] = (len(body), None, body.splitlines(True), name)
    history = ["", "import torch", "%%gpuprofile --steps 10\n" + body, "r.to_json()"]
    shell = SimpleNamespace(compile=SimpleNamespace(format_code_name=lambda f: ("Cell", "In[3]")),
                            history_manager=SimpleNamespace(input_hist_raw=history))
    monkeypatch.setattr("IPython.get_ipython", lambda: shell)
    # the body is cached under the next number; its lines start below the magic's line
    assert callsites._cell_of(name) == ("In[2]", 1)
    history[2] = body  # a plain cell: its own number, its own lines
    history[3] = body
    assert callsites._cell_of(name) == ("In[3]", 0)


def test_a_loop_stepping_by_backward_leaves_no_mode_on_later_steps(tmp_path):
    """The probe step ends inside `loss.backward()` (the mode's own handler): the mode must
    still leave the stack by the next step, and stop counting, or every baseline and profiled
    step of such a loop runs each torch call through it."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1))
    stacked: list[int] = []
    with jupyter_gpuprof.profile("by-backward", runs_root=tmp_path, **SMALL):
        for _ in range(24):
            out = model(torch.randn(4, 8))
            stacked.append(len(torch.overrides._get_current_function_mode_stack()))
            out.square().mean().backward()  # no optimizer: the parameters updated by hand
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-0.01)
                    p.grad = None
    (run,) = RunStore(tmp_path).list()
    assert run.meta.training["steps_by"] == "backward()"
    assert sum(stacked) == 1  # on in the probed step's forward alone, gone by the next one
    assert not torch.overrides._get_current_function_mode_stack()
    adds = [s for s in run.meta.callsites if s["call"] == "add_"]
    assert adds and adds[0]["calls"] <= 2 * 4  # the probed step's (and at most the next's)


def test_read_backs_of_host_tensors_are_counted_apart_while_a_gpu_is_in_use():
    """An optimizer's `.item()` on its CPU step counts waits for no GPU: counted, but apart."""
    step = torch.tensor(3.0)  # a host tensor, as Adam's step count is
    for gpu, host in ((True, 2), (False, None)):
        sites = CallSites()
        sites.begin()
        sites.gpu = gpu  # this machine has none: the recorder told one is in use
        try:
            for _ in range(2):
                step.item()  # the read-back line
        finally:
            sites.end()
        this = inspect.currentframe().f_lineno  # type: ignore[union-attr]
        (item,) = [s for s in sites.result() if s["call"] == "item"]
        assert item["line"] == this - 3 and item["calls"] == 2
        assert item.get("host_reads") == host


def test_the_sync_fix_points_at_a_read_back_that_waits(tmp_path):
    """AdamW's per-parameter `.item()` at `optimizer.step()` (host tensors) outnumbers the
    loop's one `loss.item()`, yet only the loop's waits for the GPU."""
    sites = [{"call": "item", "file": "train.py", "line": 220, "code": "optimizer.step()",
              "calls": 348, "host_reads": 348, "cell": False},
             {"call": "item", "file": "train.py", "line": 196,
              "code": "total_loss += loss.item()", "calls": 1, "cell": False}]
    (_, where), = refine([_sync_finding()], _analysis(tmp_path), sites)
    assert where is not None and where["line"] == 196
