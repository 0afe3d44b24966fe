"""`jupyter gpuprof run --try` on CPU: real scripts, each fix applied in one more real process.

Every try process runs the test script again with one fix switched on at start-up; the script
prints what it sees each step (output dtype, loss, TF32 flag, its DataLoader), and that output
is kept in the run's tries/<fix>.log, which is what these tests read.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from script_tries import STEPS, run_try_on, try_log

from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import Run, RunMeta, RunStore
from jupyter_gpuprof.store.try_files import read_try_result, write_try_result
from jupyter_gpuprof.tries.script import why_not

TRAIN = """
import contextlib, os, sys
import torch
from torch import nn


def probe_worker():
    # a process the script starts with multiprocessing (spawn: a fresh interpreter that runs
    # the bootstrap too) must not get the fix: it belongs to the script's main process only
    import multiprocessing as mp
    import probe
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=probe.autocast_on, args=(q,))
    p.start()
    print("worker_autocast", q.get())
    p.join()


def train():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
    criterion = nn.CrossEntropyLoss()  # a module without weights: never compiled
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ds = torch.utils.data.TensorDataset(torch.randn(32, 16), torch.randint(0, 4, (32,)))
    loader = torch.utils.data.DataLoader(ds, batch_size=32)
    print("loader", *(getattr(loader, k, "-") for k in
                      ("num_workers", "persistent_workers", "prefetch_factor")))
    print("tf32", torch.backends.cuda.matmul.allow_tf32)
    # "1": bf16 autocast by hand; "off": a region with it off; "fp32": a region in fp32
    manual = os.environ.get("MANUAL_AMP")
    manual_amp = manual in ("1", "fp32")
    manual_dtype = torch.float32 if manual == "fp32" else torch.bfloat16
    for i in range({steps}):
        for x, y in loader:  # one batch: the same data every step, so the loss must fall
            opt.zero_grad()
            region = (torch.autocast("cpu", dtype=manual_dtype, enabled=manual_amp) if manual
                      else contextlib.nullcontext())
            with region:
                out = model(x)
                loss = criterion(out, y)
            if i == {fail_at} and torch.is_autocast_enabled("cpu") and not manual_amp:
                raise RuntimeError("this model trains in fp32 only")
            loss.backward()
            opt.step()
            print("step", i, str(out.dtype), repr(loss.item()), type(out.grad_fn).__name__,
                  flush=True)


if __name__ == "__main__":
    if os.environ.get("PROBE_WORKER"):
        probe_worker()
    train()
"""
PROBE = """
def autocast_on(q):
    import torch
    q.put(torch.is_autocast_enabled("cpu"))
"""

def script(tmp_path, steps=STEPS + 2, fail_at=-1):
    p = tmp_path / "train.py"
    p.write_text(TRAIN.format(steps=steps, fail_at=fail_at))
    (tmp_path / "probe.py").write_text(PROBE)
    return p


def run_try(tmp_path, fixes, *extra, path=None):
    """`run --try FIXES` on the test script (or the edited one at `path`): status and run."""
    return run_try_on(tmp_path, path or script(tmp_path), fixes, *extra)


log = try_log


def test_amp_tf32_loader_each_applied_measured_and_stored(tmp_path, capfd):
    rc, run = run_try(tmp_path, "amp,tf32,loader")
    assert rc == 0 and run.meta.status == "complete", run.meta.error
    out, err = capfd.readouterr()

    amp = log(run, "amp")
    assert {s[1] for s in amp["step"]} == {"torch.bfloat16"}  # a Linear's output inside the step
    assert len(amp["step"]) == 1 + 2 + 4 - 1  # the try ends inside its last measured step
    # the losses of a hand-written autocast run of the same script, step for step: the bf16
    # weight copies autocast caches are refreshed after each optimizer step
    manual = subprocess.run([sys.executable, str(tmp_path / "train.py")], capture_output=True,
                            text=True, env={**os.environ, "MANUAL_AMP": "1"}, check=True)
    manual_losses = [ln.split()[3] for ln in manual.stdout.splitlines() if ln.startswith("step")]
    amp_losses = [s[2] for s in amp["step"]]
    assert amp_losses == manual_losses[: len(amp_losses)]
    assert float(amp_losses[-1]) < float(amp_losses[0])

    assert log(run, "tf32")["tf32"] == [["True"]]
    assert log(run, "amp")["tf32"] == [["False"]]  # one fix per try
    workers = str(min(8, os.cpu_count() or 1))
    assert log(run, "loader")["loader"] == [[workers, "True", "4"]]
    assert log(run, "amp")["loader"] == [["0", "False", "None"]]

    tries = {t["fix"]: t for t in run.meta.tries}
    assert set(tries) == {"amp", "tf32", "loader"}
    for t in tries.values():
        assert len(t["step_ms"]) == 4 and t["timing"] == "perf_counter"  # like the baseline
        assert "change" in t and isinstance(t["measured_gain_pct"], float)
        assert t["source"] == "script" and t["applied"]
    assert tries["amp"]["applied"] == ["bf16 autocast on cpu for the whole script"]
    assert [t["fix"] for t in run.read_summary()["tries"]] == [t["fix"] for t in run.meta.tries]
    assert not list((run.path / "tries").glob("*.gz")) and len(run.trace_paths()) == 1
    assert "Fixes tried" in out and "Loss not compared" not in out
    assert "gpuprof: try 3/3: loader" in err
    # the control ran first: the script once more without a fix, kept beside the tries
    control = read_try_result(run, "none")
    assert control["applied"] == ["nothing: the script re-run as it is (the control)"]
    assert len(control["step_ms"]) == 4 and "gpuprof: control:" in err
    # the first losses, each read where the script calls .backward(): the run's own and each
    # try's, from the same seeded start (TF32 changes nothing on a CPU; bf16 a little)
    tf32_printed = [float(s[2]) for s in log(run, "tf32")["step"]][:3]
    assert tries["tf32"]["loss_fixed"] == tf32_printed
    assert tries["tf32"]["loss_original"] == tf32_printed and tries["tf32"]["loss_rel_diff"] == 0
    assert tries["amp"]["loss_fixed"] == [float(x) for x in amp_losses[:3]]
    assert 0 < tries["amp"]["loss_rel_diff"] < 0.05
    assert "loss differs" in out


@pytest.mark.parametrize("where", ["start", "every step"])
def test_tf32_outlasts_a_script_that_switches_it_off_at_its_start(tmp_path, where):
    p = script(tmp_path)
    text = p.read_text().replace(  # as a script written for full fp32 does
        '    print("tf32", torch.backends.cuda.matmul.allow_tf32)',
        '    torch.backends.cuda.matmul.allow_tf32 = False')
    off = "            torch.backends.cuda.matmul.allow_tf32 = False\n" if where != "start" else ""
    text = text.replace('            loss.backward()\n',
                        '            print("tf32", torch.backends.cuda.matmul.allow_tf32)\n'
                        + off + '            loss.backward()\n')
    p.write_text(text)
    rc, run = run_try(tmp_path, "tf32", path=p)
    assert rc == 0 and run.meta.status == "complete"
    (t,) = run.meta.tries
    seen = [s[0] for s in log(run, "tf32")["tf32"]]
    if where == "start":  # off for the first (warm-up) step only, then on while measured
        assert seen[0] == "False" and set(seen[1:]) == {"True"}
        assert not t.get("error") and len(t["step_ms"]) == 4
        assert any("switched back on after its first step" in a for a in t["applied"])
    else:  # off inside every step: no measurement claims TF32
        assert t["error"].startswith("the script switches TF32 off inside its steps")


def test_an_unseeded_script_starts_the_run_and_its_tries_alike(tmp_path):
    p = script(tmp_path)
    p.write_text(p.read_text().replace("    torch.manual_seed(0)\n", ""))
    rc, run = run_try(tmp_path, "tf32", path=p)
    (t,) = run.meta.tries
    # seeded alike at start-up: the same random weights, so the same first losses (TF32 is a
    # no-op on a CPU); unseeded they would start from different weights
    assert rc == 0 and len(t["loss_original"]) == 3 and t["loss_rel_diff"] == 0.0


def test_a_loss_the_script_never_calls_backward_on_is_not_compared(tmp_path, capfd):
    p = script(tmp_path)
    p.write_text(p.read_text().replace("            loss.backward()\n",
                                       "            torch.autograd.backward([loss])\n"))
    rc, run = run_try(tmp_path, "tf32", path=p)
    (t,) = run.meta.tries
    assert rc == 0 and t["loss_rel_diff"] is None and t["loss_original"] == []
    out, _ = capfd.readouterr()
    assert "Loss not compared for tf32: no scalar .backward()" in out


def test_compile_compiles_the_trained_model_in_place(tmp_path):
    rc, run = run_try(tmp_path, "compile", "--warmup", "3")
    (t,) = run.meta.tries
    assert "error" not in t, t.get("error")
    # nn.Sequential is compiled (module.compile() would have left it eager: no graph);
    # the loss module, which has no weights the optimizer updates, is not
    assert t["applied"] == ["torch.compile(Sequential)"]
    assert t["compiled_graphs"] > 0 and len(t["step_ms"]) == 4
    grad_fns = [s[3] for s in log(run, "compile")["step"]]
    assert grad_fns[0] == "AddmmBackward0"  # the first step runs eagerly: it finds the model
    assert set(grad_fns[1:]) == {"CompiledFunctionBackward"}  # then its compiled forward runs


def test_failing_try_is_a_one_line_result_and_the_run_stays(tmp_path, capfd):
    p = script(tmp_path, fail_at=4)  # only with autocast on, inside a measured step
    text = p.read_text().replace("torch.utils.data.DataLoader(ds, batch_size=32)",
                                 "[ds.tensors]")  # and no DataLoader at all
    p.write_text(text.replace(  # and, with TF32 on, a crash before the first step
        '    print("tf32", torch.backends.cuda.matmul.allow_tf32)',
        '    if torch.backends.cuda.matmul.allow_tf32:\n'
        '        raise RuntimeError("TF32 is not allowed here")'))
    rc, run = run_try(tmp_path, "amp,loader,tf32", path=p)
    assert rc == 0 and run.meta.status == "complete" and run.trace_paths()
    tries = {t["fix"]: t for t in run.meta.tries}
    assert tries["amp"]["error"] == "RuntimeError: this model trains in fp32 only"
    assert tries["loader"]["error"].startswith("no DataLoader to change")
    assert tries["tf32"]["error"] == ("the command exited with status 1 before the try "
                                      "measured its steps: RuntimeError: TF32 is not allowed here")
    out, err = capfd.readouterr()
    assert "amp      failed: RuntimeError: this model trains in fp32 only" in out
    assert "Traceback" not in out + err  # the try's own traceback stays in tries/amp.log
    assert "Traceback" in (run.path / "tries" / "amp.log").read_text()
    assert "verdict" in out.lower()  # the run's report is printed all the same


def test_a_try_that_hangs_is_stopped_and_reported(tmp_path, monkeypatch, capfd):
    p = script(tmp_path)
    helper = tmp_path / "helper.pid"
    p.write_text(p.read_text().replace(  # with TF32 on, the script starts a helper process
        '    print("tf32", torch.backends.cuda.matmul.allow_tf32)',  # and never reaches a step
        '    if torch.backends.cuda.matmul.allow_tf32:\n'
        '        import subprocess, time\n'
        '        h = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])\n'
        f'        open({str(helper)!r}, "w").write(str(h.pid))\n'
        '        print("waiting", flush=True); time.sleep(600)'))
    monkeypatch.setenv("JUPYTER_GPUPROF_TRY_TIMEOUT_S", "8")
    rc, run = run_try(tmp_path, "tf32", path=p)
    assert rc == 0 and run.meta.status == "complete"
    (t,) = run.meta.tries
    assert t["error"].startswith("stopped after 8 s without finishing its baseline")
    assert "waiting" in (run.path / "tries" / "tf32.log").read_text()
    out, err = capfd.readouterr()
    assert "tf32     failed: stopped after 8 s" in out and "Traceback" not in out + err
    # what the try started is stopped with it (a process group), not left sleeping
    pid = int(helper.read_text())
    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{pid}/stat") as f:  # gone, or a zombie its dead parent left
            if f.read().split(")")[-1].split()[0] == "Z":
                break
        time.sleep(0.1)
    else:
        raise AssertionError(f"the try's helper process {pid} still runs")


def test_the_try_time_limit_follows_the_runs_own_length(tmp_path, monkeypatch):
    import time

    from jupyter_gpuprof.tries import script as st

    run = RunStore(tmp_path).create("x")
    monkeypatch.delenv(st.ENV_TRY_TIMEOUT, raising=False)
    assert st.try_timeout_s(run) == st.TRY_TIMEOUT_MIN_S  # a short run: the floor
    ten_min_ago = time.localtime(time.time() - 600)
    run.meta.created = time.strftime("%Y-%m-%dT%H:%M:%S%z", ten_min_ago)
    assert st.try_timeout_s(run) == pytest.approx(st.TRY_TIMEOUT_FACTOR * 600, rel=0.01)


def test_try_without_a_list_takes_the_findings_fixes(tmp_path, monkeypatch, capfd):
    import jupyter_gpuprof.report as report

    real = report.run_summary

    def with_precision_finding(run):
        s = real(run)  # a CPU trace has no GPU findings: add the one fp32 GEMMs would have
        finding = {"id": "fp32-gemm", "category": "precision", "title": "fp32 GEMMs",
                   "evidence": "GEMMs in fp32", "fix": "bf16 autocast",
                   "expected_gain_pct": 30.0, "cost_ms": 1.0, "data": {}}
        return {**s, "findings": [finding]}

    monkeypatch.setattr(report, "run_summary", with_precision_finding)
    monkeypatch.setenv("MANUAL_AMP", "off")  # the script's forward opts out of autocast
    monkeypatch.setenv("PROBE_WORKER", "1")
    rc, run = run_try(tmp_path, None)
    assert log(run, "amp")["worker_autocast"] == [["False"]]
    tries = {t["fix"]: t for t in run.meta.tries}
    assert set(tries) == {"tf32", "amp"} and tries["tf32"]["predicted_gain_pct"] == 30.0
    # autocast was on for the script, but not where its forward ran: not a measured try
    assert tries["amp"]["error"].startswith("the step's forward ran without bf16 autocast on cpu")


def test_amp_runs_the_scripts_own_fp32_autocast_region_in_bf16(tmp_path, monkeypatch):
    """nanoGPT's --dtype=float32 wraps its forward in torch.autocast(dtype=torch.float32):
    inside it the try's bf16 was overridden, and the try measured fp32 as "amp"."""
    monkeypatch.setenv("MANUAL_AMP", "fp32")
    rc, run = run_try(tmp_path, "amp")
    assert {s[1] for s in log(run, "amp")["step"]} == {"torch.bfloat16"}
    (amp,) = run.meta.tries
    assert "error" not in amp, amp["error"]
    assert ("the code's own torch.autocast(dtype=torch.float32) runs in bfloat16"
            in amp["applied"])


def test_try_without_a_list_and_no_findings_says_so(tmp_path, capfd):
    rc, run = run_try(tmp_path, None)
    assert rc == 0 and run.meta.tries == []
    assert "none of the recommended fixes can be applied" in capfd.readouterr().err
    # nothing was tried: only the run's own first losses are there, kept for a later try
    assert [f.name for f in (run.path / "tries").iterdir()] == ["original.losses.json"]


@pytest.mark.parametrize("cmd, fixes, message", [
    (["torchrun", "--nproc-per-node", "2", "train.py"], "amp",
     "--try measures a single-process script"),
    ([sys.executable, "-m", "torch.distributed.run", "train.py"], "amp",
     "--try measures a single-process script"),
    ([sys.executable, "train.py"], "fp8", "--try: unknown fix fp8"),
])
def test_refused_before_anything_runs(tmp_path, capsys, cmd, fixes, message):
    root = tmp_path / "runs"
    assert main(["run", "--runs-root", str(root), "--try", fixes, "--", *cmd]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not root.exists()


def test_runs_whose_steps_cannot_be_tried(tmp_path):
    meta = RunMeta(status="complete", settings={"mode": "script"},
                   baseline={"step_ms": [1.0, 1.1]})
    run = Run(tmp_path, meta)
    assert why_not(run) is None
    meta.world_size = 2
    assert "ran 2 ranks" in why_not(run)
    meta.world_size, meta.settings = None, {"mode": "loop"}
    assert "profile() block" in why_not(run)
    meta.settings, meta.status = {"mode": "script"}, "failed"
    assert "did not complete" in why_not(run)


def test_try_results_stay_inside_the_run(tmp_path):
    run = Run(tmp_path, RunMeta())
    write_try_result(tmp_path, "amp", {"fix": "amp", "step_ms": [1.0]})
    assert read_try_result(run, "amp") == {"fix": "amp", "step_ms": [1.0]}
    assert json.loads((tmp_path / "tries" / "amp.json").read_text())["fix"] == "amp"
    with pytest.raises(ValueError):
        write_try_result(tmp_path, "sub/amp", {})  # a fix name is never a path
    assert read_try_result(run, "graphs") is None  # saved nothing: died first
    for bad in ('{"fix": "amp", "median_ms": "5"}', "[1, 2]", '{"step_ms": [1.0]', ""):
        (tmp_path / "tries" / "amp.json").write_text(bad)
        said = read_try_result(run, "amp")
        assert said is not None and said["fix"] == "amp", bad
        assert said["error"].startswith("tries/amp.json is not a try's result: "), bad
        assert "\n" not in said["error"]


def test_amp_on_a_gpu_without_bf16_is_refused_not_run_in_fp16(tmp_path, monkeypatch):
    import torch

    from jupyter_gpuprof.capture.settings import CaptureSettings
    from jupyter_gpuprof.tries.process import EXIT_NOT_APPLIED, begin_try

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    run = Run(tmp_path, RunMeta(name="train"))
    with pytest.raises(SystemExit) as stopped:  # before the script does anything
        begin_try("amp", CaptureSettings(mode="script"), run)
    assert stopped.value.code == EXIT_NOT_APPLIED
    error = read_try_result(run, "amp")["error"]
    assert error.startswith("RuntimeError: this GPU has no bf16") and "GradScaler" in error


