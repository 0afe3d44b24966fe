"""Phase ranges: hooks go in and out; forward/backward/optimizer/data land in a real CPU trace."""

from __future__ import annotations

import json
from collections import Counter

import torch
import torch.utils.data.dataloader as dl
from capture_fixtures import Trainer, global_state, nothing_left_installed  # noqa: F401
from torch.nn.modules import module as nn_module

from jupyter_gpuprof.capture.optimizer_hooks import AFTER_STEP, BEFORE_STEP
from jupyter_gpuprof.capture.phases import PhaseRanges


def test_activate_deactivate_restore_everything():
    before = global_state()
    orig_backward, orig_next = torch.autograd.backward, dl._BaseDataLoaderIter.__next__
    r = PhaseRanges()
    # nothing runs in the user's steps before activate(): warm-up and baseline are untouched
    assert global_state() == before and not BEFORE_STEP.callbacks and not AFTER_STEP.callbacks
    r.activate()
    assert len(nn_module._global_forward_pre_hooks) == before[0] + 1
    assert len(nn_module._global_forward_hooks) == before[1] + 1
    # the optimizer callbacks go first: "optimizer" closes before the step boundary after it
    assert BEFORE_STEP.callbacks[:1] == (r._optimizer_pre,)
    assert AFTER_STEP.callbacks[:1] == (r._optimizer_post,)
    assert torch.autograd.backward is not orig_backward
    assert dl._BaseDataLoaderIter.__next__ is not orig_next
    r.deactivate()
    assert len(nn_module._global_forward_hooks) == before[1]
    assert not BEFORE_STEP.callbacks and not AFTER_STEP.callbacks
    assert torch.autograd.backward is orig_backward and dl._BaseDataLoaderIter.__next__ is orig_next
    r.activate()
    r.deactivate()
    assert global_state() == before


def test_someone_elses_wrapper_is_not_dropped():
    r = PhaseRanges()
    r.activate()
    ours = torch.autograd.backward

    def theirs(*a, **k):
        return ours(*a, **k)

    torch.autograd.backward = theirs
    try:
        r.deactivate()
        assert torch.autograd.backward is theirs
    finally:
        torch.autograd.backward = r._orig_backward


def _record(tmp_path, body) -> Counter:
    from torch.profiler import ProfilerActivity, profile

    r = PhaseRanges(nvtx=False)
    r.activate()
    try:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            body(r)
    finally:
        r.deactivate()
    out = tmp_path / "t.json"
    prof.export_chrome_trace(str(out))
    events = json.loads(out.read_text())["traceEvents"]
    return Counter(
        e["name"] for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"
    )


def test_ranges_land_in_a_real_cpu_trace(tmp_path):
    t = Trainer()
    batches = iter(t.loader(3))

    def body(r):
        for _ in range(3):
            x, y = next(batches)
            t.step(x, y)
            r.end_step()
            r.begin_step()

    names = _record(tmp_path, body)
    # One "forward" per step although three modules run: only the outermost call opens it.
    assert names["forward"] == 3
    assert names["backward"] == 3
    assert names["optimizer"] == 3
    assert names["data"] == 3


def test_forward_that_raises_does_not_stick(tmp_path):
    t = Trainer()

    class Bad(torch.nn.Module):
        def forward(self, x):
            raise RuntimeError("nan")

    bad = torch.nn.Sequential(torch.nn.Linear(16, 16), Bad())

    def body(r):
        try:
            bad(t.x)
        except RuntimeError:
            pass
        r.end_step()
        r.begin_step()
        t.step()
        r.end_step()

    names = _record(tmp_path, body)
    assert names["forward"] == 2 and names["backward"] == 1


def test_inactive_ranges_emit_nothing(tmp_path):
    from torch.profiler import ProfilerActivity, profile

    t = Trainer()
    r = PhaseRanges(nvtx=False)
    # made but not active: baseline and warm-up steps look like this
    try:
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            t.step()
    finally:
        r.deactivate()
    out = tmp_path / "t.json"
    prof.export_chrome_trace(str(out))
    with open(out) as f:
        names = {e["name"] for e in json.load(f)["traceEvents"]}
    assert not names & {"forward", "backward", "optimizer", "data"}


def test_nvtx_backend_skipped_without_cuda():
    if torch.cuda.is_available():
        return  # on a GPU machine NVTX is used; covered by the GPU run
    assert PhaseRanges()._nvtx is None
