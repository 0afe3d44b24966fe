"""The capture-pieces benchmark's pieces really go in and come out again between its blocks."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from benchmark_modules import load_benchmark
from capture_fixtures import global_state

from jupyter_gpuprof.capture.optimizer_hooks import AFTER_STEP, BEFORE_STEP


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bench_capture_pieces")


@pytest.mark.parametrize("piece", ["hooks", "hooks-separate", "hooks-hostclock", "mark-only",
                                   "bare-hook", "counters", "stalls", "all", "pre-mark",
                                   "pre-bare", "raw-post", "bwd-mark", "session"])
def test_each_piece_runs_in_the_step_and_leaves_nothing_behind(bench, piece):
    """A plain block must run the user's step untouched: every piece switched off leaves no
    hook, callback or wrapper, and while on it is really called at each optimizer step."""
    before = global_state()
    pieces = bench.Pieces(marks=100)
    w = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([w], lr=0.1)
    calls = pieces.cost.calls
    off = pieces.on(piece)
    try:
        assert global_state() != before or BEFORE_STEP.callbacks or AFTER_STEP.callbacks
        for _ in range(3):
            (w * 2).sum().backward()
            opt.step()
        if piece == "bwd-mark":  # a mark of its own at each backward, outside the account
            assert len(pieces._marks._t) == 3
        elif piece not in ("stalls", "raw-post"):  # no DataLoader here; an empty torch hook
            assert pieces.cost.calls > calls
    finally:
        off()
    assert global_state() == before
    assert not BEFORE_STEP.callbacks and not AFTER_STEP.callbacks


def test_the_old_hook_layout_is_rebuilt_for_comparison(bench):
    """`hooks-separate` registers each optimizer callback as its own torch hook (the layout
    before the shared hooks), the shared chains emptied meanwhile."""
    from torch.optim import optimizer as optim

    pre = len(optim._global_optimizer_pre_hooks)
    pieces = bench.Pieces(marks=100)
    off = pieces.on("hooks-separate")
    try:
        # the phase ranges' pre callback and the step counter's, each behind its own hook,
        # beside the emptied shared one
        assert len(optim._global_optimizer_pre_hooks) == pre + 3
        assert not BEFORE_STEP.callbacks and not AFTER_STEP.callbacks
    finally:
        off()


def test_the_session_piece_times_its_steps_as_a_baseline_and_leaves_no_run(bench, tmp_path):
    """`session` is the capture itself: its steps are baseline steps of a real ProfileSession
    (the observer check's `on` blocks), and switched off it leaves no hook and no run folder."""
    from jupyter_gpuprof.capture.session import current_session

    before = global_state()
    pieces = bench.Pieces(marks=100)
    w = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([w], lr=0.1)
    off = pieces.on("session")
    session = current_session()
    try:
        for _ in range(4):
            (w * 2).sum().backward()
            opt.step()
        assert session is not None and session.driver.phase.name == "BASELINE"
        assert session.driver.n == 3  # the first step started it; three more were timed
    finally:
        off()
    assert current_session() is None and global_state() == before
    assert [p.name for p in Path(pieces._root).iterdir()] == []
