"""The peak attributed: kinds against the recording's independently measured truth (5 %)."""

from __future__ import annotations

from memory_recordings import history, known, truth, within

from jupyter_gpuprof.analysis import memory_attribution as attr
from jupyter_gpuprof.analysis.memory_step import memory_step


def _saved_activations_truth() -> int:
    """Storages saved for backward that are not parameters (linear layers save their weight)."""
    a = truth("gpt2")["addresses"]
    params = {p for p, _ in a["parameters"]}
    return sum(b for p, b in a["saved_for_backward"] if p not in params)


def test_kinds_sum_to_max_memory_allocated() -> None:
    step = memory_step(history("gpt2"), known("gpt2"))
    assert within(sum(step.by_kind.values()), truth("gpt2")["max_memory_allocated"], 5)


def test_each_kind_within_5pct_of_its_truth() -> None:
    step = memory_step(history("gpt2"), known("gpt2"))
    t = truth("gpt2")
    assert within(step.kind_high["parameters"], t["parameters_bytes"], 5)
    assert within(step.kind_high["optimizer_state"], t["optimizer_state_bytes"], 5)
    assert within(step.kind_high["gradients"], t["gradients_bytes"], 5)
    assert within(step.kind_high["saved_activations"], _saved_activations_truth(), 5)


def test_phase_rules_alone_find_gradients_and_saved_activations() -> None:
    """Without any known address: gradients outlive backward, activations outlive forward."""
    step = memory_step(history("gpt2"))
    t = truth("gpt2")
    assert within(step.kind_high["gradients"], t["gradients_bytes"], 5)
    assert within(step.kind_high["saved_activations"], _saved_activations_truth(), 5)
    # model state is there but unnamed
    assert step.by_kind["parameters"] == 0
    assert step.by_kind["before_recording"] >= t["parameters_bytes"] + t["optimizer_state_bytes"]


def test_known_addresses_name_model_state() -> None:
    named = memory_step(history("gpt2"), known("gpt2"))
    unnamed = memory_step(history("gpt2"))
    t = truth("gpt2")
    assert named.known_addresses and not unnamed.known_addresses
    assert within(named.by_kind["parameters"], t["parameters_bytes"], 5)
    assert within(
        unnamed.by_kind["before_recording"] - named.by_kind["before_recording"],
        t["parameters_bytes"] + t["optimizer_state_bytes"],
        5,
    )


def test_peak_is_in_backward_held_by_the_models_call() -> None:
    step = memory_step(history("gpt2"), known("gpt2"))
    assert step.peak_phase == "backward"
    # the recording script calls the model on one line: it holds the saved activations
    assert step.lines[0].where.startswith("<script>:")
    assert within(step.lines[0].bytes, step.by_kind["saved_activations"], 5)


def test_heaviest_module_is_the_layer_loop() -> None:
    """GPT-2's blocks are called from one line in a loop, six times: checkpointing's unit."""
    step = memory_step(history("gpt2"), known("gpt2"))
    assert step.heavy is not None
    assert step.heavy.call.startswith("modeling_gpt2.py:") and step.heavy.calls == 6
    assert (
        0.5 * step.kind_high["saved_activations"]
        <= step.heavy.saved_bytes
        <= step.kind_high["saved_activations"]
    )


def test_fragmentation_reserved_vs_allocated() -> None:
    step = memory_step(history("fragmented"))
    t = truth("fragmented")
    frag = step.fragmentation
    assert frag.reserved_bytes == t["memory_reserved"]
    assert frag.slack_bytes == t["memory_reserved"] - t["memory_allocated_after"]
    assert frag.peak_reserved_ratio is not None and frag.peak_reserved_ratio > 1.2


def test_user_line_skips_libraries() -> None:
    frames = [
        {"name": "linear", "filename": "<site-packages>/torch/nn/functional.py", "line": 1},
        {"name": "forward", "filename": "/x/lib/python3.12/site-packages/m.py", "line": 2},
        {"name": "train", "filename": "/home/me/train.py", "line": 42},
    ]
    assert attr.user_line(frames) == "train.py:42"
    assert attr.module_path(frames) == ("m.py:2",)


def test_thinned_series_keeps_the_peak() -> None:
    step = memory_step(history("gpt2"))
    assert len(step.series_us) <= 400 and max(step.series_bytes) == step.peak_bytes


def test_each_kind_rule_on_a_tiny_history() -> None:
    """forward→backward: saved; within forward: temporary; backward→after: gradient;
    optimizer→after: state; before the recording: unnamed, unless its address is known."""
    from jupyter_gpuprof.analysis.memory_history import replay

    def ev(action: str, addr: int, t: int) -> dict[str, object]:
        return {"action": action, "addr": addr, "size": 10 * (addr + 1), "time_us": t, "frames": []}

    snap = {
        "segments": [{"device": 0, "total_size": 10_000, "blocks": [
            {"address": 0, "size": 10, "state": "active_allocated"},
            {"address": 9, "size": 100, "state": "active_allocated"},
            {"address": 3, "size": 40, "state": "active_allocated"},
            {"address": 4, "size": 50, "state": "active_allocated"}]}],
        "device_traces": [[ev("alloc", 1, 1), ev("alloc", 2, 2), ev("free_completed", 2, 3),
                           ev("alloc", 3, 12), ev("free_completed", 1, 13),
                           ev("alloc", 4, 22)]],
        "external_annotations": [
            {"stage": "START", "name": "forward", "time_us": 0},
            {"stage": "END", "name": "forward", "time_us": 5},
            {"stage": "START", "name": "backward", "time_us": 10},
            {"stage": "END", "name": "backward", "time_us": 15},
            {"stage": "START", "name": "optimizer", "time_us": 20},
            {"stage": "END", "name": "optimizer", "time_us": 25}]}
    h = replay(snap)
    kinds = dict(zip(h.blocks["addr"], attr.classify(h), strict=True))
    assert kinds == {1: "saved_activations", 2: "temporaries", 3: "gradients",
                     4: "optimizer_state", 0: "before_recording", 9: "before_recording"}
    named = dict(zip(h.blocks["addr"], attr.classify(h, {"parameters": [(9, 100)]}), strict=True))
    assert named[9] == "parameters" and named[0] == "before_recording"


def test_gradients_kept_only_when_they_lived_through_an_optimizer_step() -> None:
    """Two micro-batches then the optimizer: the first micro-batch's gradients are live at the
    second's peak under set_to_none too (not kept); a gradient from before the last optimizer
    step (zero_grad() zeroes it in place) is."""
    from jupyter_gpuprof.analysis.memory_history import replay
    from jupyter_gpuprof.analysis.memory_whatif import gradients_kept_across_steps

    def ev(action: str, addr: int, t: int) -> dict[str, object]:
        return {"action": action, "addr": addr, "size": 10 * (addr + 1), "time_us": t, "frames": []}

    def ranges(*spans: tuple[str, int, int]) -> list[dict[str, object]]:
        return [{"stage": stage, "name": n, "time_us": t} for n, a, b in spans
                for stage, t in (("START", a), ("END", b))]

    trace = [ev("alloc", 1, 2), ev("alloc", 2, 12), ev("free_completed", 1, 13),
             ev("alloc", 3, 22), ev("alloc", 4, 31), ev("free_completed", 3, 32)]
    snap = {"segments": [{"device": 0, "total_size": 10_000, "blocks": [
        {"address": 0, "size": 10, "state": "active_allocated"},
        {"address": 2, "size": 30, "state": "active_allocated"},
        {"address": 4, "size": 50, "state": "active_allocated"}]}],
        "device_traces": [trace]}
    micro = replay({**snap, "external_annotations": ranges(
        ("forward", 0, 5), ("backward", 10, 15), ("forward", 20, 25), ("backward", 30, 35))})
    kinds = attr.classify(micro, {"gradients": [(2, 30), (4, 50)]})
    assert set(kinds[micro.blocks["addr"].isin([2, 4])]) == {"gradients"}
    assert gradients_kept_across_steps(micro, kinds) == 0
    zeroed = replay({**snap, "external_annotations": ranges(
        ("forward", 0, 5), ("backward", 10, 15), ("optimizer", 16, 18), ("forward", 20, 25),
        ("backward", 30, 35))})
    kinds = attr.classify(zeroed, {"gradients": [(0, 10), (2, 30), (4, 50)]})
    assert gradients_kept_across_steps(zeroed, kinds) == 10 + 30  # from before it and step 1's
