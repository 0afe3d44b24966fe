"""ProfileSession through profile()/step(): loop mode, manual steps, failures keep trace + meta."""

from __future__ import annotations

import json

import pytest
import torch
from capture_fixtures import Trainer, nothing_left_installed, profiler_steps, trace_names  # noqa: F401

import jupyter_gpuprof
from jupyter_gpuprof.capture.session import CaptureSettings, ProfileSession, current_session
from jupyter_gpuprof.store import RunStore, open_run

SMALL = dict(steps=4, warmup=2, wait=1, prof_warmup=1, active=3)
NEEDED = 1 + 2 + 4 + (1 + 1 + 3)  # first step starts the count, then warm-up, baseline, profiler


def only_run(root):
    runs = RunStore(root).list()
    assert len(runs) == 1
    return runs[0]


def test_profile_loop_mode_finds_optimizer_steps(tmp_path):
    t = Trainer()
    with jupyter_gpuprof.profile("loop", runs_root=tmp_path, **SMALL) as session:
        assert current_session() is session
        for _ in range(NEEDED + 5):  # the loop keeps running after the capture, untouched
            t.step()
        assert session.finalized and session.driver.done
    run = only_run(tmp_path)
    m = run.meta
    assert m.status == "complete" and m.error is None
    assert len(m.baseline["step_ms"]) == 4 and m.baseline["timing"] == "perf_counter"
    assert len(m.profiled_step_ms) == 3 and all(ms > 0 for ms in m.profiled_step_ms)
    assert m.settings["mode"] == "loop" and m.settings["schedule"] == {
        "wait": 1,
        "warmup": 1,
        "active": 3,
    }
    assert m.flops_per_step and m.flops_per_step > 0
    assert (
        m.env["torch"] == torch.__version__ and m.env["cuda_available"] == torch.cuda.is_available()
    )
    names = trace_names(run.trace_paths()[0])
    assert profiler_steps(names) == 3
    assert names["forward"] == 3 and names["backward"] == 3 and names["optimizer"] == 3


def test_flops_match_the_model():
    # 8x16 @ 16x32 and 8x32 @ 32x4: forward 2*(8*16*32 + 8*32*4); backward adds weight grads for
    # both layers and the input grad of the second: 2*(8*16*32 + 8*32*4) + 2*(8*32*4).
    fwd = 2 * (8 * 16 * 32 + 8 * 32 * 4)
    expected = fwd + fwd + 2 * (8 * 32 * 4)
    from jupyter_gpuprof.capture.flops import StepFlops

    t = Trainer()
    f = StepFlops()
    f.begin()
    t.step()
    f.end()
    assert f.flops == expected and f.error is None


def test_only_the_first_optimizer_counts(tmp_path):
    t = Trainer()
    other = torch.optim.SGD(t.model.parameters(), lr=0.0)
    with jupyter_gpuprof.profile("two", runs_root=tmp_path, **SMALL) as session:
        for _ in range(NEEDED):
            t.step()
            other.step()
        assert session.driver.done
    assert len(only_run(tmp_path).meta.baseline["step_ms"]) == 4


def test_manual_step_overrides_optimizer_hooks(tmp_path):
    t = Trainer()
    with jupyter_gpuprof.profile("manual", runs_root=tmp_path, **SMALL) as session:
        for _ in range(NEEDED):
            t.step()
            t.step()  # two optimizer steps per "training step": only step() marks boundaries
            jupyter_gpuprof.step()
        assert session.driver.done and session.driver.n == NEEDED - 1
    names = trace_names(only_run(tmp_path).trace_paths()[0])
    assert profiler_steps(names) == 3 and names["optimizer"] == 6


def test_step_is_a_noop_without_a_session():
    jupyter_gpuprof.step()
    assert current_session() is None


def test_exception_keeps_trace_and_meta_and_reraises(tmp_path):
    t = Trainer()
    err = ValueError("bad batch\nwith detail")
    with pytest.raises(ValueError) as info:
        with jupyter_gpuprof.profile("boom", runs_root=tmp_path, **SMALL):
            for i in range(NEEDED):
                t.step()
                if i == NEEDED - 3:  # inside the profiler's active steps
                    raise err
    assert info.value is err and info.value.__traceback__ is not None
    run = only_run(tmp_path)
    assert run.meta.status == "failed" and run.meta.error == "ValueError: bad batch"
    assert len(run.meta.baseline["step_ms"]) == 4
    assert run.trace_paths(), "the partial trace was flushed by prof.stop()"
    assert profiler_steps(trace_names(run.trace_paths()[0])) >= 1


def test_keyboard_interrupt_keeps_meta(tmp_path):
    t = Trainer()
    with pytest.raises(KeyboardInterrupt):
        with jupyter_gpuprof.profile("ctrl-c", runs_root=tmp_path, **SMALL):
            for _ in range(3):
                t.step()
            raise KeyboardInterrupt
    m = only_run(tmp_path).meta
    assert m.status == "failed" and m.error == "KeyboardInterrupt"


def test_short_loop_is_reported_not_raised(tmp_path):
    t = Trainer()
    with jupyter_gpuprof.profile("short", runs_root=tmp_path, **SMALL):
        for _ in range(4):
            t.step()
    m = only_run(tmp_path).meta
    assert m.status == "failed"
    assert m.error.startswith("capture incomplete: the code ran 4 steps, the capture needs 12")


def test_no_optimizer_steps(tmp_path):
    with jupyter_gpuprof.profile("idle", runs_root=tmp_path, **SMALL):
        pass
    m = only_run(tmp_path).meta
    assert m.status == "failed" and m.error.startswith("no training steps seen")


def test_body_mode_run_steps_counts_exactly(tmp_path):
    t = Trainer()
    settings = CaptureSettings(**SMALL, mode="body")
    session = ProfileSession(
        settings, name="body", code="t.step()", store=RunStore(tmp_path)
    ).begin()
    try:
        session.run_steps(t.step)
    finally:
        run = session.finish()
    assert t.steps == settings.schedule().total == 2 + 4 + 5
    assert run.meta.status == "complete" and run.meta.code == "t.step()"
    assert (
        json.loads((run.path / "meta.json").read_text())["baseline"]["step_ms"]
        == run.meta.baseline["step_ms"]
    )
    assert open_run(run.path).meta.profiled_step_ms == run.meta.profiled_step_ms


def test_one_session_at_a_time(tmp_path):
    with jupyter_gpuprof.profile("a", runs_root=tmp_path, **SMALL):
        with pytest.raises(RuntimeError, match="already running"):
            ProfileSession(CaptureSettings(**SMALL), store=RunStore(tmp_path)).begin()


def test_distributed_env_writes_rank_files(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    run = RunStore(tmp_path).create("ddp")
    t = Trainer()
    session = ProfileSession(CaptureSettings(**SMALL, mode="script"), run=run).begin()
    try:
        for _ in range(NEEDED):
            t.step()
    finally:
        session.finish()
    assert [p.name for p in run.trace_paths()] == ["trace.rank1.json.gz"]
    ranks = run.rank_metas()
    assert list(ranks) == [1] and ranks[1].rank == 1 and ranks[1].world_size == 2
    assert ranks[1].status == "complete"


def test_no_phases_installs_only_the_step_hook(tmp_path):
    from torch.nn.modules import module as nn_module
    from torch.optim import optimizer as optim_module

    from jupyter_gpuprof.capture.optimizer_hooks import BEFORE_STEP

    t = Trainer()
    pre = len(optim_module._global_optimizer_pre_hooks)
    with jupyter_gpuprof.profile(
        "plain", runs_root=tmp_path, phases=False, count_flops=False, **SMALL
    ):
        # one torch pre-hook, the capture's chain, with one callback: the step counter's (a
        # closure's backward calls are not micro-batches); the phase ranges would add their own
        assert len(optim_module._global_optimizer_pre_hooks) == pre + 1
        assert [h.__name__ for h in BEFORE_STEP.callbacks] == ["_enter_step"]
        for _ in range(NEEDED):
            t.step()
            assert not nn_module._global_forward_pre_hooks
    names = trace_names(only_run(tmp_path).trace_paths()[0])
    assert profiler_steps(names) == 3 and "forward" not in names and "backward" not in names


def test_a_rename_made_while_the_block_runs_is_kept_at_its_end(tmp_path):
    """The sidebar's rename and re-tag of a run whose profile() block is still running
    (the capture keeps the meta it began with in memory) survive the block's final write."""
    t = Trainer()
    with jupyter_gpuprof.profile("before", runs_root=tmp_path, **SMALL) as session:
        t.step()
        RunStore(tmp_path).update(session.run.id, name="renamed meanwhile", tags=["kept"])
        for _ in range(NEEDED + 2):
            t.step()
        assert session.finalized  # the capture's meta is written: the edit was kept
        assert only_run(tmp_path).meta.name == "renamed meanwhile"
        RunStore(tmp_path).update(session.run.id, tags=["kept", "after capture"])
    m = only_run(tmp_path).meta
    assert m.status == "complete" and m.name == "renamed meanwhile"
    assert m.tags == ["kept", "after capture"]  # finish() writes the step count after that
    assert session.run.meta.name == "renamed meanwhile"
