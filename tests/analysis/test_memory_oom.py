"""The OOM post-mortem on the snapshot an out-of-memory observer took at the failing allocation."""

from __future__ import annotations

from memory_recordings import history, truth, within

from jupyter_gpuprof.analysis.memory_oom import limit_from_error, oom_post_mortem


def test_the_failed_request_and_what_was_allocated() -> None:
    t = truth("oom")
    pm = oom_post_mortem(history("oom"), t["error"])
    assert pm is not None
    assert pm.requested_bytes == t["observer_requested"] == 192 * 1024**2
    assert within(pm.allocated_bytes, t["max_memory_allocated"], 0.1)
    assert pm.state_bytes + pm.step_bytes == pm.allocated_bytes
    # the memory the model held before the step is what was left after the exception unwound
    assert within(pm.state_bytes, t["memory_allocated_after_unwind"], 1)


def test_top_three_allocations_with_their_lines() -> None:
    pm = oom_post_mortem(history("oom"), truth("oom")["error"])
    assert pm is not None and len(pm.top) == 3
    sizes = [a.bytes for a in pm.top]
    assert sizes == sorted(sizes, reverse=True)
    assert sizes[0] == int(history("oom").live_at(history("oom").n_events - 1)["bytes"].max())
    assert all(a.line.startswith("<script>:") and a.module for a in pm.top)


def test_limit_and_fragmentation() -> None:
    t = truth("oom")
    pm = oom_post_mortem(history("oom"), t["error"])
    assert pm is not None and pm.limit_bytes is not None
    assert within(pm.limit_bytes, t["cap_bytes"], 1)
    assert pm.fragmentation.reserved_bytes == t["memory_reserved"]
    assert not pm.fits_in_free_block  # the cap, not fragmentation, stopped it


def test_limit_from_error_text() -> None:
    assert limit_from_error("… 8.00 GiB allowed; …") == 8 * 1024**3
    assert limit_from_error("GPU 0 has a total capacity of 2.00 GiB of which") == 2 * 1024**3
    assert limit_from_error("something else") is None


def test_no_oom_no_post_mortem() -> None:
    assert oom_post_mortem(history("gpt2")) is None


def test_a_failure_inside_a_layer_is_placed_in_its_layer_loop() -> None:
    """GPT-2 on the H200 ran out of memory in its 6th layer's GELU: that innermost call holds
    half the step's bytes in one block; the layer loop is the call on its way out that
    repeats, and how far the forward got sets the split."""
    from jupyter_gpuprof.analysis.memory_whatif import layers_run

    t = truth("oom_layers")
    progress = layers_run(history("oom_layers"))
    assert progress is not None
    assert progress.call == t["layer_loop"]
    assert progress.begun == t["layers_begun"] and progress.total == t["layers"]


def test_the_recommended_split_is_one_that_fit_by_hand() -> None:
    """By hand under the same cap, 4 micro-batches still ran out of memory and 8 fit."""
    from jupyter_gpuprof.advice.memory_fixes import oom_fixes

    t = truth("oom_layers")
    pm = oom_post_mortem(history("oom_layers"), t["error"])
    assert pm is not None
    (split,) = [f for f in oom_fixes(pm) if f.id == "micro_batches"]
    k = int(split.title.split()[0])
    assert "fits" in t["by_hand_under_the_same_cap"][str(k)]
