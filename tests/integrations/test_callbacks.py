"""The framework callbacks and `jupyter gpuprof run` over a Trainer script, on a tiny GPT-2."""

from __future__ import annotations

import sys

import pytest
from capture_fixtures import nothing_left_installed  # noqa: F401
from framework_fixtures import SETUP

from jupyter_gpuprof.advice.findings import Finding, Verdict
from jupyter_gpuprof.advice.frameworks import in_framework_terms
from jupyter_gpuprof.advice.verdict import Advice
from jupyter_gpuprof.cli import main
from jupyter_gpuprof.store import RunStore

pytest.importorskip("transformers")
pytest.importorskip("lightning")

SMALL = {"steps": 6, "warmup": 2, "wait": 1, "prof_warmup": 1, "active": 2}


@pytest.fixture(scope="module")
def ns():
    namespace: dict = {}
    exec(SETUP, namespace)
    return namespace


def analyzed_by_cli(root, capsys):
    runs = RunStore(root).list()
    assert len(runs) == 1
    assert runs[0].meta.status == "complete", runs[0].meta.error
    capsys.readouterr()
    assert main(["analyze", str(runs[0].path)]) == 0
    assert "jupyter_gpuprof report" in capsys.readouterr().out
    return runs[0].meta


def test_hf_callback_writes_a_run_that_analyze_reads(ns, tmp_path, capsys):
    from jupyter_gpuprof.integrations.transformers import GpuProfCallback

    cb = GpuProfCallback(runs_root=tmp_path / "runs", **SMALL)
    trainer = ns["hf_trainer"](20, str(tmp_path / "out"))
    trainer.add_callback(cb)
    trainer.train()
    assert cb.report is not None and cb.run is not None
    meta = analyzed_by_cli(tmp_path / "runs", capsys)
    assert meta.framework["name"] == "transformers"
    assert meta.training["optimizer_steps"] == 20  # the whole training, not just the capture
    assert len(meta.baseline["step_ms"]) == SMALL["steps"]


def test_lightning_callback_writes_a_run_that_analyze_reads(ns, tmp_path, capsys):
    from jupyter_gpuprof.integrations.lightning import GpuProfCallback

    cb = GpuProfCallback(runs_root=tmp_path / "runs", **SMALL)
    ns["lightning_trainer"](20, callbacks=[cb]).fit(ns["TinyLM"](), ns["lightning_loader"]())
    assert cb.report is not None
    meta = analyzed_by_cli(tmp_path / "runs", capsys)
    assert meta.framework["name"] == "lightning"
    assert meta.framework["args"]["precision"] == "32-true"


def test_callback_fits_a_short_training(ns, tmp_path):
    from jupyter_gpuprof.integrations.transformers import GpuProfCallback

    cb = GpuProfCallback(runs_root=tmp_path / "runs", analyze=False)  # asks for 44 steps
    trainer = ns["hf_trainer"](20, str(tmp_path / "out"))
    trainer.add_callback(cb)
    trainer.train()
    meta = cb.run.meta
    assert meta.status == "complete", meta.error
    assert "the training runs 20 optimizer steps" in meta.training["schedule_fitted"]
    assert meta.settings["warmup"] + meta.settings["steps"] + 8 == 19


def test_cli_run_finds_steps_of_a_trainer_script(tmp_path):
    body = SETUP + f"\nhf_trainer(24, {str(tmp_path / 'out')!r}).train()\n"
    script = tmp_path / "train_hf.py"
    script.write_text(body)
    root = tmp_path / "runs"
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in SMALL.items()]
    assert main(["run", "--runs-root", str(root), *flags, "--", sys.executable,
                 str(script)]) == 0
    meta = RunStore(root).list()[0].meta
    assert meta.status == "complete", meta.error
    assert meta.framework["name"] == "transformers"  # found on the stack of the first step
    assert len(meta.baseline["step_ms"]) == SMALL["steps"]


def _advice(category):
    f = Finding("x", category, "t", "e", "torch fix", 1.0, 50.0)
    return Advice(Verdict(category, "s", "high", []), [f])


def test_fixes_in_framework_terms():
    hf = {"name": "transformers", "args": {"bf16": False, "dataloader_num_workers": 0}}
    out = in_framework_terms(_advice("precision"), hf, {})
    assert "TrainingArguments(..., bf16=True" in out.findings[0].fix
    out = in_framework_terms(_advice("input"), hf, {})
    assert "dataloader_num_workers=8" in out.findings[0].fix
    pl = {"name": "lightning", "args": {"precision": "32-true"}}
    out = in_framework_terms(_advice("precision"), pl, {})
    assert 'precision="bf16-mixed"' in out.findings[0].fix
    # already on: the framework fix would change nothing, the torch fix stays
    on = {"name": "transformers", "args": {"bf16": True}}
    assert in_framework_terms(_advice("precision"), on, {}).findings[0].fix == "torch fix"
    assert in_framework_terms(_advice("precision"), {}, {}).findings[0].fix == "torch fix"


def test_graph_notes_and_what_a_step_is():
    out = in_framework_terms(_advice("launch"), None,
                             {"cuda_graph_replays": 12, "micro_batches_per_step": 4.0})
    reasons = " ".join(out.verdict.reasons)
    assert "CUDA graphs (12 replays)" in reasons
    # accumulation is what a step is: the summary's step definition says it, once
    from jupyter_gpuprof.step_definition import step_definition
    assert "4 micro-batches (gradient accumulation)" in step_definition(
        {"steps_by": "optimizer.step()", "micro_batches_per_step": 4.0}, "loop")
    assert in_framework_terms(_advice("launch"), None, {}).verdict.reasons == []


@pytest.mark.parametrize(("boundaries", "expect"), [
    (43, None),                      # the default schedule fits: unchanged
    (39, (1, 30, 1, 2, 5)),          # warm-up gives way first
    (20, (1, 11, 1, 2, 5)),          # then the baseline
    (3, (0, 0, 0, 1, 2)),            # the profiler window last
])
def test_fit_schedule_order(boundaries, expect):
    from jupyter_gpuprof.capture.settings import CaptureSettings
    from jupyter_gpuprof.capture.step_budget import fit_schedule

    fitted = fit_schedule(CaptureSettings(), boundaries)
    if expect is None:
        assert fitted is None
        return
    got = (fitted.warmup, fitted.steps, fitted.wait, fitted.prof_warmup, fitted.active)
    assert got == expect and fitted.schedule().total <= boundaries


def test_callback_inside_the_magic_stands_aside(ns, tmp_path, capsys):
    from jupyter_gpuprof.capture.profile_block import profile
    from jupyter_gpuprof.integrations.transformers import GpuProfCallback

    cb = GpuProfCallback(runs_root=tmp_path / "cb")
    trainer = ns["hf_trainer"](12, str(tmp_path / "out"))
    trainer.add_callback(cb)
    with profile(runs_root=tmp_path / "runs", **SMALL):
        trainer.train()
    assert "the callback leaves this training to it" in capsys.readouterr().out
    assert cb.run is None and not (tmp_path / "cb").exists()
