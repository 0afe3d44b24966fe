"""The memory fixes priced from the recordings' breakdowns: each rule can fail."""

from __future__ import annotations

from memory_recordings import history, known, truth

from jupyter_gpuprof.advice.memory_fixes import (
    activation_bytes,
    headroom,
    memory_fixes,
    oom_fixes,
)
from jupyter_gpuprof.advice.thresholds import OOM_STEP_GROWTH
from jupyter_gpuprof.analysis.memory_oom import oom_post_mortem
from jupyter_gpuprof.analysis.memory_step import memory_step


def _gpt2():  # type: ignore[no-untyped-def]
    return memory_step(history("gpt2"), known("gpt2"))


def test_checkpointing_frees_all_but_one_layer_and_costs_their_forward() -> None:
    step = _gpt2()
    fix = {f.id: f for f in memory_fixes(step, forward_ms=5.0)}["checkpointing"]
    assert step.heavy is not None
    assert fix.saves_bytes == int(step.heavy.saved_bytes * 5 / 6)
    share = step.heavy.saved_bytes / step.kind_high["saved_activations"]
    assert fix.time_ms is not None and abs(fix.time_ms - 5.0 * share) < 1e-9
    unpriced = {f.id: f for f in memory_fixes(step)}["checkpointing"]
    assert unpriced.time_ms is None and "not priced" in unpriced.time_note


def test_autocast_halves_fp32_saved_activations_only() -> None:
    step = _gpt2()
    fp32 = {f.id: f for f in memory_fixes(step, activation_dtype_bytes=4)}
    assert fp32["autocast"].saves_bytes == step.by_kind["saved_activations"] // 2
    assert "autocast" not in {f.id for f in memory_fixes(step, activation_dtype_bytes=2)}


def test_micro_batches_scale_activations_not_model_state() -> None:
    step = _gpt2()
    fix = {f.id: f for f in memory_fixes(step)}["micro_batches"]
    assert fix.saves_bytes == activation_bytes(step) // 2
    assert (
        fix.saves_bytes
        < step.peak_bytes - step.by_kind["parameters"] - step.by_kind["optimizer_state"]
    )


def test_expandable_segments_only_where_reserved_runs_far_above_the_peak() -> None:
    frag = memory_step(history("fragmented"))
    fixes = {f.id: f for f in memory_fixes(frag)}
    t = truth("fragmented")
    assert fixes["expandable_segments"].saves_bytes == t["memory_reserved"] - frag.peak_bytes
    assert "expandable_segments" not in {f.id for f in memory_fixes(_gpt2())}  # 3 % slack


def test_set_to_none_only_where_gradients_are_kept() -> None:
    step = _gpt2()  # the recording frees them (set_to_none=True): nothing to offer
    assert "set_to_none" not in {f.id for f in memory_fixes(step)}
    # as with zero_grad(): the gradients, at their known addresses, live through the peak
    step.by_kind["gradients"] = truth("gpt2")["gradients_bytes"]
    assert {f.id: f for f in memory_fixes(step)}["set_to_none"].saves_bytes == truth("gpt2")[
        "gradients_bytes"
    ]


def test_headroom_grows_activations_only() -> None:
    step = _gpt2()
    act = activation_bytes(step)
    gpu = 2 * step.peak_bytes
    n = headroom(step, gpu)
    assert n is not None and abs((step.peak_bytes - act) + n * act - gpu) < 1
    assert headroom(step, None) is None


def test_oom_fix_frees_what_the_step_was_over() -> None:
    t = truth("oom")
    pm = oom_post_mortem(history("oom"), t["error"])
    assert pm is not None and pm.limit_bytes is not None
    fixes = {f.id: f for f in oom_fixes(pm)}
    over = pm.state_bytes + OOM_STEP_GROWTH * (pm.step_bytes + pm.requested_bytes) - pm.limit_bytes
    assert fixes["micro_batches"].saves_bytes >= over
    assert "expandable_segments" not in fixes  # 776 KiB reserved-but-free: not fragmentation
