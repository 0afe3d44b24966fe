"""The allocator history in a capture: CUDA only, off in the baseline, the OOM snapshot saved."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
import torch
from capture_fixtures import Trainer
from memory_recordings import FakeApi

from jupyter_gpuprof.analysis.memory_history import load_history
from jupyter_gpuprof.analysis.memory_oom import oom_post_mortem
from jupyter_gpuprof.capture import memory_record
from jupyter_gpuprof.capture.memory_record import OURS, MemoryRecorder, TorchMemoryApi
from jupyter_gpuprof.capture.session import CaptureSettings, ProfileSession
from jupyter_gpuprof.store import RunStore

SMALL = dict(steps=4, warmup=2, wait=1, prof_warmup=1, active=3)
NEEDED = 1 + 2 + 4 + (1 + 1 + 3)


@pytest.fixture(autouse=True)
def _fresh_observer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_record._Observer, "attached", False)
    monkeypatch.setattr(memory_record._Observer, "recorder", None)


def _session(tmp_path, api: FakeApi, **kw: Any) -> ProfileSession:
    session = ProfileSession(
        CaptureSettings(**SMALL, mode="script", **kw), store=RunStore(tmp_path)
    )
    session.memory.api = api
    return session.begin()


def test_cpu_capture_never_initialises_cuda() -> None:
    rec = MemoryRecorder(api=TorchMemoryApi())
    rec.start()
    assert not rec.recording and rec.result() is None
    if not torch.cuda.is_available():
        assert not torch.cuda.is_initialized()


def test_recorded_in_warmup_and_profiled_steps_not_the_baseline(tmp_path) -> None:
    api, t = FakeApi(), Trainer()
    session = _session(tmp_path, api)
    try:
        for _ in range(NEEDED):
            t.step()
    finally:
        run = session.finish()
    assert run.meta.status == "complete"
    assert api.calls == [
        f"record {memory_record.MAX_ENTRIES}",
        "stop",
        f"record {memory_record.MAX_ENTRIES}",
        "snapshot",
        "stop",
    ]
    path = run.memory_history_path()
    assert path is not None
    saved = json.loads(gzip.decompress(path.read_bytes()))
    # the stepped optimizer's tensors were walked (CPU ones here: no CUDA storage to name)
    assert set(saved[OURS]["addresses"]) == {"parameters", "gradients", "optimizer_state"}
    assert load_history(path).peak_bytes > 0
    # one recorded step's autograd graph, walked at its backward (the autocast fix's price)
    ops = {n["op"] for n in saved[OURS]["graph"]}
    assert {"AddmmBackward0", "ReluBackward0", "NllLossBackward0"} <= ops


def test_no_memory_history_option_records_nothing(tmp_path) -> None:
    api, t = FakeApi(), Trainer()
    session = _session(tmp_path, api, memory_history=False)
    try:
        for _ in range(NEEDED):
            t.step()
    finally:
        run = session.finish()
    assert api.calls == [] and run.memory_history_path() is None
    assert run.meta.settings["memory_history"] is False


def test_out_of_memory_keeps_the_snapshot_at_the_failure(tmp_path) -> None:
    """The step fails in warm-up: the run is saved failed with the post-mortem's snapshot."""
    api, t = FakeApi("oom"), Trainer()
    session = _session(tmp_path, api)
    err: BaseException | None = None
    try:
        for i in range(NEEDED):
            if i == 2:
                api.fail(192 * 1024**2)
            t.step()
    except torch.OutOfMemoryError as e:
        err = e
    finally:
        run = session.finish(err)
    assert err is not None and run.meta.status == "failed"
    assert run.meta.error is not None and "out of memory" in run.meta.error
    path = run.memory_history_path()
    assert path is not None
    saved = json.loads(gzip.decompress(path.read_bytes()))
    assert saved[OURS]["oom"]["requested"] == 192 * 1024**2
    assert "out of memory" in saved[OURS]["oom"]["error"]
    pm = oom_post_mortem(load_history(path), saved[OURS]["oom"]["error"])
    assert pm is not None and pm.requested_bytes == 192 * 1024**2 and len(pm.top) == 3
    assert all(a.line.startswith("<script>:") for a in pm.top)


def test_the_observer_is_wired_once_per_process(tmp_path) -> None:
    api = FakeApi()
    rec = MemoryRecorder(api=api)
    rec.start()
    assert api.observer == memory_record._Observer.on_oom
    with pytest.raises(torch.OutOfMemoryError):
        api.fail(1024)
    assert rec.oom_requested == 1024 and rec.oom_snapshot is not None
    rec.result()
    again = FakeApi()
    MemoryRecorder(api=again).start()
    assert again.observer is None  # torch cannot detach one: the first dispatches to the next


def test_a_script_that_starts_cuda_after_the_capture_is_recorded_from_its_first_step(
        tmp_path) -> None:
    api, t = FakeApi(cuda=False), Trainer()
    session = _session(tmp_path, api)
    try:
        assert api.calls == []  # CUDA not in use yet: nothing started
        api.cuda = True  # the script moved its model to the GPU
        t.step()
        assert api.calls == [f"record {memory_record.MAX_ENTRIES}"]
        for _ in range(NEEDED):
            t.step()
    finally:
        run = session.finish()
    assert api.calls.count("stop") == 2 and run.memory_history_path() is not None


def test_a_discarded_session_stops_recording(tmp_path) -> None:
    api = FakeApi()
    session = _session(tmp_path, api)
    session.discard()
    assert api.calls[-1] == "stop" and memory_record._Observer.recorder is None


def test_each_rank_of_a_job_writes_its_own_history(tmp_path, monkeypatch) -> None:
    from jupyter_gpuprof.report.memory_summary import history_file

    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    run = RunStore(tmp_path).create("ddp")
    api, t = FakeApi(), Trainer()
    session = ProfileSession(CaptureSettings(**SMALL, mode="script"), run=run)
    session.memory.api = api
    session.begin()
    try:
        for _ in range(NEEDED):
            t.step()
    finally:
        session.finish()
    assert run.memory_history_path() == run.path / "memory_history.rank1.json.gz"
    assert history_file(run.path) == run.memory_history_path()


def test_the_traced_steps_run_without_the_history(tmp_path) -> None:
    """Each allocation's Python stack is a host cost: the history is snapshot and stopped at
    the boundary before the profiler's first recorded step, never kept on through it."""
    api, t = FakeApi(), Trainer()
    session = _session(tmp_path, api)
    first_traced = SMALL["warmup"] + SMALL["steps"] + SMALL["wait"] + SMALL["prof_warmup"]
    seen: list[list[str]] = []
    try:
        for _ in range(NEEDED):
            t.step()
            seen.append(list(api.calls))
    finally:
        run = session.finish()
    # the calls as they stood once the first traced step had run (the boundary before it is
    # marked by the step with index first_traced - 1, one boundary behind in script mode)
    traced = seen[first_traced + 1]
    assert traced[-2:] == ["snapshot", "stop"], traced
    assert api.calls == traced  # nothing recorded after it
    assert run.memory_history_path() is not None


def test_no_untraced_capture_steps_no_history_over_the_trace(tmp_path) -> None:
    api, t = FakeApi(), Trainer()
    session = ProfileSession(
        CaptureSettings(steps=4, warmup=2, wait=0, prof_warmup=0, active=3, mode="script"),
        store=RunStore(tmp_path))
    session.memory.api = api
    session.begin()
    try:
        for _ in range(1 + 2 + 4 + 3):
            t.step()
    finally:
        session.finish()
    assert api.calls.count(f"record {memory_record.MAX_ENTRIES}") == 1  # warm-up only


def test_graph_walked_once_and_never_through_saved_tensor_hooks() -> None:
    """A recorded step's graph is walked at its backward; a step that ran saved-tensor hooks
    (non-reentrant checkpointing) is not, its backward untouched, and torch is put back."""
    from torch import nn
    from torch.utils.checkpoint import checkpoint

    enter = torch.autograd.graph.saved_tensors_hooks.__enter__
    layer = nn.Sequential(nn.Linear(8, 8), nn.GELU())
    x = torch.randn(4, 8, requires_grad=True)
    plain = MemoryRecorder(api=FakeApi())
    plain.start()
    loss = layer(x).sum()
    plain.note_loss((loss,))
    assert plain.graph and {n["op"] for n in plain.graph} >= {"AddmmBackward0", "GeluBackward0"}
    plain.close()
    ckpt = MemoryRecorder(api=FakeApi())
    ckpt.start()
    loss = checkpoint(layer, x, use_reentrant=False).sum()
    ckpt.note_loss((loss,))
    assert ckpt.graph == []
    loss.backward()
    assert x.grad is not None
    ckpt.close()
    assert torch.autograd.graph.saved_tensors_hooks.__enter__ is enter


def test_the_probed_step_is_kept_out_of_the_memory_record(tmp_path, monkeypatch) -> None:
    """FLOP counting keeps much of what a checkpointed layer frees (on the H200 nanoGPT's
    checkpointed peak read 2 GB above its plain one under the tool): the probed warm-up step
    runs with the history stopped, and the run's peak starts again once it is over."""
    from jupyter_gpuprof.capture import environment

    api, t = FakeApi(), Trainer()
    session = _session(tmp_path, api)
    seen: list[tuple[str, bool]] = []
    begin = session.flops.begin

    def probe_begins() -> None:
        seen.append(("probe", session.memory.recording))
        begin()

    monkeypatch.setattr(session.flops, "begin", probe_begins)
    monkeypatch.setattr(environment, "reset_peak_memory",
                        lambda: seen.append(("reset", session.flops.active)))
    try:
        for _ in range(NEEDED):
            t.step()
    finally:
        run = session.finish()
    assert run.meta.status == "complete" and run.meta.flops_per_step
    assert seen == [("probe", False), ("reset", False)]
    assert run.memory_history_path() is not None
