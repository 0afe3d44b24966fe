"""`--try` leaves the kernel as it found it, reports failing tries, and judges the rest."""

import contextlib
import random
import statistics

import numpy as np
import pytest
import torch

from jupyter_gpuprof.advice.tries import judge_tries, rerank_findings
from jupyter_gpuprof.tries import notebook as try_fixes
from jupyter_gpuprof.tries.appliers.compile import called_modules
from jupyter_gpuprof.tries.notebook import KernelState, parse_fixes, round_sizes, run_tries

STEP = """
x = torch.randn(16, 8)
loss = torch.nn.functional.mse_loss(model(x), x[:, :2])
loss.backward()
opt.step()
opt.zero_grad(set_to_none=False)
noise = np.random.rand() + random.random()
"""


def _kernel():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    ns = {"torch": torch, "np": np, "random": random, "model": model, "opt": opt}
    code = compile(STEP, "<cell>", "exec")

    def step():
        exec(code, ns)

    for _ in range(3):  # the baseline ran before the tries: optimizer state exists
        step()
    return ns, step


def _snapshot(ns):
    return ({k: v.detach().clone() for k, v in ns["model"].state_dict().items()},
            [None if p.grad is None else p.grad.clone() for p in ns["model"].parameters()],
            {k: {n: t.clone() if torch.is_tensor(t) else t for n, t in s.items()}
             for k, s in ns["opt"].state_dict()["state"].items()},
            torch.get_rng_state().clone(), np.random.get_state()[1].copy(), random.getstate(),
            torch.backends.cuda.matmul.allow_tf32)


def _same(a, b):
    params_a, grads_a, opt_a, rng_a, np_a, py_a, tf32_a = a
    params_b, grads_b, opt_b, rng_b, np_b, py_b, tf32_b = b
    assert all(torch.equal(params_a[k], params_b[k]) for k in params_a)
    assert all(torch.equal(x, y) for x, y in zip(grads_a, grads_b, strict=True))
    for k in opt_a:
        for n in opt_a[k]:
            assert torch.equal(torch.as_tensor(opt_a[k][n]), torch.as_tensor(opt_b[k][n]))
    assert torch.equal(rng_a, rng_b) and np.array_equal(np_a, np_b) and py_a == py_b
    assert tf32_a == tf32_b


def test_trying_fixes_leaves_parameters_optimizer_and_rng_as_they_were():
    ns, step = _kernel()
    model, opt = ns["model"], ns["opt"]
    before = _snapshot(ns)
    control, results = run_tries(step, ns, ["amp", "tf32", "loader"], warmup=2, steps=4)
    _same(before, _snapshot(ns))
    assert ns["model"] is model and ns["opt"] is opt
    by = {r["fix"]: r for r in results}
    # no DataLoader to rebuild: reported, not raised
    assert "no DataLoader" in by["loader"]["error"]
    assert len(by["amp"]["step_ms"]) == 4 and by["amp"]["median_ms"] > 0
    # bf16 autocast changes the first steps' loss a little, measurably
    assert by["amp"]["loss_rel_diff"] is not None and 0 < by["amp"]["loss_rel_diff"] < 0.2
    assert by["tf32"]["loss_rel_diff"] == 0.0  # a CPU ignores the TF32 flag


def test_the_control_is_the_step_again_from_the_same_state_and_leaves_nothing_behind():
    """The notebook's control, like a script's: the cell's step with no fix, measured first,
    with the tries' warm-up and step count, from the state every try starts from (its first
    losses are the original's, exactly), and the kernel is left as it was."""
    ns, step = _kernel()
    before = _snapshot(ns)
    control, (tried,) = run_tries(step, ns, ["tf32"], warmup=2, steps=5)
    _same(before, _snapshot(ns))
    assert control["fix"] == "none" and len(control["step_ms"]) == 5 == len(tried["step_ms"])
    assert control["loss_fixed"] == control["loss_original"] and control["loss_rel_diff"] == 0
    # without it, nothing but the fixes is measured
    assert run_tries(step, ns, ["tf32"], warmup=1, steps=2, control=False).control is None


def test_a_fix_applied_by_another_applier_is_measured_like_any_try():
    """An A/A benchmark's no-op fix goes through the same measuring (benchmarks/bench_aa.py)."""
    ns, step = _kernel()
    seen = []

    @contextlib.contextmanager
    def noop(fix, ns_, step_, cuda):
        seen.append(fix)
        yield step_

    control, tries = run_tries(step, ns, ["noop", "other"], warmup=1, steps=3, apply=noop)
    assert seen == ["noop", "other"] * 3 and [t["fix"] for t in tries] == ["noop", "other"]
    assert all(t["loss_fixed"] == control["loss_fixed"] for t in tries)


def test_the_control_and_the_tries_are_measured_in_interleaved_rounds(monkeypatch):
    """Control, fix, control, fix...: a host that changes speed between blocks moves both
    sides alike, and each round's median is kept for the judge's sign test."""
    ns, step = _kernel()
    order = []
    measure = try_fixes._measure

    def spy(fixed, ns_, original, warmup, steps, *rest):
        order.append((ns_.get("_which"), warmup, steps))
        measure(fixed, ns_, original, warmup, steps, *rest)

    @contextlib.contextmanager
    def marked(fix, ns_, step_, cuda):
        ns_["_which"] = fix
        yield step_

    monkeypatch.setattr(try_fixes, "_measure", spy)
    monkeypatch.setattr(try_fixes, "_unchanged", marked)
    control, (tried,) = run_tries(step, ns, ["tf32"], warmup=5, steps=30, apply=marked)
    assert round_sizes(30) == [4, 4, 4, 4, 4, 4, 3, 3] and round_sizes(5) == [1] * 5
    assert [w for w, _, _ in order] == ["none", "tf32"] * 8
    assert [(n, w) for _, w, n in order[:4]] == [(4, 5), (4, 5), (4, 3), (4, 3)]
    for t in (control, tried):
        assert len(t["step_ms"]) == t["n"] == 30 and len(t["round_ms"]) == 8
        assert t["round_ms"][0] == statistics.median(t["step_ms"][:4])


def test_without_restoring_the_state_the_test_would_see_the_change(monkeypatch):
    ns, step = _kernel()
    before = _snapshot(ns)
    monkeypatch.setattr(KernelState, "restore", lambda self: None)
    monkeypatch.setattr(KernelState, "restore_values", lambda self: None)
    run_tries(step, ns, ["tf32"], warmup=1, steps=2)
    with pytest.raises(AssertionError):
        _same(before, _snapshot(ns))


def test_a_raising_try_is_reported_and_the_state_restored(monkeypatch):
    ns, step = _kernel()
    before = _snapshot(ns)
    calls = {"n": 0}

    def flaky(fixed, *a, **k):
        calls["n"] += 1
        fixed()  # one step ran and changed the model, then the try fails
        raise RuntimeError("compiler crashed\nlong trace")

    monkeypatch.setattr(try_fixes, "_measure", flaky)
    control, (result,) = run_tries(step, ns, ["amp"])
    assert result == {"fix": "amp", "error": "RuntimeError: compiler crashed"}
    assert control == {"fix": "none", "error": "RuntimeError: compiler crashed"}
    _same(before, _snapshot(ns))


def test_compile_finds_the_modules_the_step_calls():
    ns, step = _kernel()
    ns["unused"] = torch.nn.Linear(2, 2)
    assert called_modules(ns, step) == ["model"]


def test_auto_picks_the_recommended_fixes_and_rejects_unknown_ones():
    findings = [{"category": "sync"}, {"category": "precision"}, {"category": "memory"}]
    assert parse_fixes("auto", findings) == ["tf32", "amp", "compile"]
    assert parse_fixes("graphs,loader", findings) == ["graphs", "loader"]
    # a finding that names its own tries (bf16 autocast where TF32 is on) is measured by those
    assert parse_fixes("auto", [{"category": "precision", "try_fixes": ["amp"]}]) == ["amp"]
    with pytest.raises(ValueError, match="unknown fix fp8"):
        parse_fixes("fp8", findings)


def test_tries_are_judged_against_the_baseline_and_rerank_the_findings():
    base = [10.0, 10.1, 9.9, 10.05, 9.95, 10.0]
    raw = [{"fix": "compile", "step_ms": [6.0, 6.1, 5.9, 6.05, 5.95, 6.0]},
           {"fix": "tf32", "step_ms": [9.0, 9.1, 8.9, 9.05, 8.95, 9.0]},
           {"fix": "graphs", "error": "RuntimeError: boom"}]
    findings = [{"id": "p", "category": "precision", "expected_gain_pct": 50.0},
                {"id": "m", "category": "memory", "expected_gain_pct": 30.0}]
    tries = judge_tries(raw, base, None, findings)
    assert [t["fix"] for t in tries] == ["compile", "tf32", "graphs"]
    assert tries[0]["measured_gain_pct"] == pytest.approx(40.0)
    assert tries[0]["predicted_gain_pct"] == 30.0 and tries[0]["change"]["significant"]
    assert [f["id"] for f in rerank_findings(findings, tries)] == ["m", "p"]


def test_a_script_try_is_measured_against_the_script_rerun_unchanged():
    """The control (the script re-run without a fix, in a process like the tries') is the
    reference of every try: the run's own baseline ran under the capture, at another time.
    The MNIST example: baseline 7.3 ms, control 8.6 ms, graphs 11.8 ms was printed -62 %
    against the baseline; against the control it is -38 %; a try that moved the step as
    far as re-running did is no gain at all."""
    base = [10.0, 10.1, 9.9, 10.05, 9.95, 10.0]
    # the control: the same script re-run without a fix ran 9 % slower (another process)
    control = {"fix": "none", "step_ms": [10.9, 11.0, 10.8, 10.95, 10.85, 10.9]}
    raw = [{"fix": "tf32", "step_ms": [10.9, 11.0, 10.8, 10.95, 10.85, 10.9]},  # the control's
           {"fix": "amp", "step_ms": [6.0, 6.1, 5.9, 6.05, 5.95, 6.0]}]
    alone = {t["fix"]: t for t in judge_tries(raw, base, None, [])}
    assert alone["tf32"]["change"]["significant"]  # against the baseline: "9 % slower"
    tries = {t["fix"]: t for t in judge_tries(raw, base, None, [], control)}
    assert tries["tf32"]["measured_gain_pct"] == pytest.approx(0.0)
    assert not tries["tf32"]["change"]["significant"] and tries["tf32"]["reference"] == "none"
    assert tries["amp"]["measured_gain_pct"] == pytest.approx(100 * (1 - 6.0 / 10.9))
    assert tries["amp"]["change"]["significant"]
    # a control that failed leaves the baseline as the reference
    broken = {"fix": "none", "error": "RuntimeError: boom"}
    assert judge_tries(raw, base, None, [], broken)[0]["measured_gain_pct"] == pytest.approx(40.0)


def test_a_notebook_try_is_judged_by_its_rounds_against_the_control():
    """Pooled, the try's steps read 20 % slower than the control's; round by round it was
    slower in 5 of 8 only (the host slowed during some of its blocks): noise, not a result."""
    control = {"fix": "none", "step_ms": [10.0, 10.1, 9.9, 10.05] * 8,
               "round_ms": [10.0] * 8}
    slower = {"fix": "tf32", "step_ms": [12.0, 12.1, 11.9, 12.05] * 8,
              "round_ms": [12.0, 12.0, 12.0, 12.0, 12.0, 9.0, 9.0, 9.0]}
    (alone,) = judge_tries([{**slower, "round_ms": []}], [], None, [], control)
    assert alone["change"]["significant"]  # the steps alone
    (t,) = judge_tries([slower], [], None, [], control)
    assert not t["change"]["significant"] and t["change"]["rounds_p_value"] > 0.3
    (won,) = judge_tries([{**slower, "round_ms": [12.0] * 8}], [], None, [], control)
    assert won["change"]["significant"] and won["change"]["rounds_p_value"] == 2 / 256


def test_amp_runs_the_cells_own_fp32_autocast_region_in_bf16_and_puts_autocast_back():
    """A cell that autocasts in fp32 (nanoGPT's --dtype=float32) measured its fp32 step as
    "amp": the try's bf16 was overridden inside the cell's own region."""
    model = torch.nn.Linear(8, 8)
    seen = []

    def step():
        with torch.autocast("cpu", dtype=torch.float32):
            seen.append(model(torch.randn(4, 8)).dtype)

    ns = {"torch": torch, "model": model}
    with try_fixes.applied("amp", ns, step, False) as fixed:
        fixed()
    assert seen == [torch.bfloat16]
    step()  # after the try: torch's autocast as it was
    assert seen[-1] == torch.float32


def test_the_tries_steps_are_sampled_like_the_baseline(monkeypatch):
    """A try's timed steps carry the GPU-conditions sampler at the baseline's interval, not the
    capture's faster one: the sampler's NVML calls cost a host-bound step what they cost the
    baseline it is compared with."""
    from jupyter_gpuprof.capture import conditions

    ns, step = _kernel()
    made: list[float] = []
    seen = {}

    def spy(fixed, ns_, original, warmup, steps, cuda, sampler, out):
        s = sampler()
        made.append(s.interval_s)
        seen["cuda"] = cuda
        out.update({"fix": "none", "n": 0, "step_ms": []})

    monkeypatch.setattr(try_fixes, "_measure", spy)
    run_tries(step, ns, ["tf32"], warmup=1, steps=2)
    assert made and set(made) == {conditions.BASELINE_INTERVAL_S}
