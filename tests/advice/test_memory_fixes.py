"""The memory fixes priced from the recordings' breakdowns: each rule can fail."""

from __future__ import annotations

import json

import pytest
from memory_recordings import MEMORY, captured, history, known, one_kernel_forward, truth, within

from jupyter_gpuprof.advice.memory_fixes import (
    activation_bytes,
    headroom,
    memory_fixes,
    oom_fixes,
    oom_growth,
)
from jupyter_gpuprof.advice.thresholds import OOM_STEP_GROWTH
from jupyter_gpuprof.analysis import memory_attribution as attr
from jupyter_gpuprof.analysis.autocast_dtypes import AutocastReplay
from jupyter_gpuprof.analysis.memory_oom import OomPostMortem, oom_post_mortem
from jupyter_gpuprof.analysis.memory_step import Fragmentation, memory_step
from jupyter_gpuprof.analysis.memory_whatif import LayerProgress


def _gpt2():  # type: ignore[no-untyped-def]
    return memory_step(history("gpt2"), known("gpt2"))


def test_checkpointing_keeps_each_layers_input_and_costs_their_forward() -> None:
    """The recorded peak is the loss's backward, before any layer is recomputed: every layer's
    saved activations go but its output (8 x 512 tokens x 768 fp32 = 12.6 MB), not all but one
    layer's (the old rule's 5/6 of them, 1.92 GB: on the H200 it missed GPT-2's by -32 %)."""
    step = _gpt2()
    fix = {f.id: f for f in memory_fixes(step, forward=one_kernel_forward(5.0))}["checkpointing"]
    assert step.heavy is not None
    h = history("gpt2")
    kinds = attr.classify(h, known("gpt2"))
    live = h.live_at(h.peak_i)
    saved = live[kinds[live.index] == "saved_activations"]
    in_layers = sum(
        int(r.bytes) for _, r in saved.iterrows()
        if step.heavy.call in attr.module_path(h.frames[int(r.frame_i)] if r.frame_i >= 0 else [])
    )
    layer_input = 8 * 512 * 768 * 4
    assert fix.saves_bytes == in_layers - 6 * layer_input
    assert fix.saves_bytes > step.heavy.saved_bytes * 5 / 6
    share = step.heavy.saved_bytes / step.kind_high["saved_activations"]
    assert fix.time_ms is not None and abs(fix.time_ms - 5.0 * share) < 1e-9
    unpriced = {f.id: f for f in memory_fixes(step)}["checkpointing"]
    assert unpriced.time_ms is None and "not priced" in unpriced.time_note


def _measured_saving(case: str) -> int:
    """The H200's measured saving: a plain step's max_memory_allocated less the checkpointed one's
    (docs/evidence/memory_acceptance_h200_run2.json and _run4.json, as the truth file says)."""
    t = truth(case)
    return int(t["max_memory_allocated"]) - int(t["checkpointing_max_memory_allocated"])


def test_checkpointing_unit_is_the_layer_not_its_mlp() -> None:
    """GPT-2, 12 layers at 1,024 tokens (the acceptance's step): each layer's MLP holds 51 % of
    the forward's saved activations, so the deepest call holding half is the MLP; checkpointing
    wraps the whole layer, so its attention and norms go too. Priced on the MLPs the replay kept
    2.3 GB of them: 6.04 GB predicted against 8.31 GB measured (-27 %)."""
    h, k = history("gpt2_12l"), captured("gpt2_12l")
    step = memory_step(h, k)
    fix = {f.id: f for f in memory_fixes(step)}["checkpointing"]
    assert within(fix.saves_bytes, _measured_saving("gpt2_12l"), 1)
    assert step.heavy is not None and step.heavy.calls == truth("gpt2_12l")["layers"]
    kinds = attr.classify(h, k)
    fwd = next(p for p in h.phases if p.name == attr.FORWARD)
    b = h.blocks
    mine = b[(kinds == "saved_activations") & (b["alloc_us"] >= fwd.start_us)
             & (b["alloc_us"] <= fwd.end_us)]
    paths = mine["frame_i"].map(lambda i: attr.module_path(h.frames[i]) if i >= 0 else ())
    deepest, _ = attr.heaviest_module(paths, mine["bytes"])
    assert deepest != step.heavy.call  # the case: a part of each layer holds half
    assert all(step.heavy.call in p for p in paths if deepest in p)  # ... inside the layer
    # by hand: the peak stays at the loss's backward (its log-softmax output and two logits-sized
    # gradients live); every layer's saved activations go there but its output (25.2 MB)
    assert fix.saves_bytes == _layers_at_peak_less_outputs("gpt2_12l")


def _layers_at_peak_less_outputs(case: str) -> int:
    """The layers' saved bytes live at the recorded peak less each layer's output (the next
    one's input: 8 x 1,024 tokens x 768 fp32), the saving at a peak before any recompute."""
    h, k = history(case), captured(case)
    step = memory_step(h, k)
    assert step.heavy is not None
    kinds = attr.classify(h, k)
    live = h.live_at(h.peak_i)
    saved = live[kinds[live.index] == "saved_activations"]
    in_layers = sum(int(r.bytes) for _, r in saved.iterrows()
                    if step.heavy.call in attr.module_path(h.frames[int(r.frame_i)]))
    return in_layers - truth(case)["layers"] * 8 * 1024 * 768 * 4


def test_checkpointing_under_autocast_drops_the_layers_until_their_backward() -> None:
    """Autocast's weight casts are saved-looking blocks of each layer freed as its context exits,
    before the backward: the backward reaches a layer at its first free in the backward, not
    then (taken for it, the layers came back before the loss's backward: "frees 0" on the H200's
    autocast capture). Not measured on the GPU: priced by hand from the blocks."""
    step = memory_step(history("gpt2_12l_autocast"), captured("gpt2_12l_autocast"))
    assert step.peak_phase == "backward"
    fix = {f.id: f for f in memory_fixes(step)}["checkpointing"]
    assert fix.saves_bytes == _layers_at_peak_less_outputs("gpt2_12l_autocast") > 0


def test_checkpointing_of_a_llama_stays_priced_as_measured() -> None:
    """The Llama-style model's heaviest call is its layer loop already: the same saving."""
    step = memory_step(history("llama_8l"), captured("llama_8l"))
    assert step.heavy is not None and step.heavy.calls == truth("llama_8l")["layers"]
    fix = {f.id: f for f in memory_fixes(step)}["checkpointing"]
    assert within(fix.saves_bytes, _measured_saving("llama_8l"), 1)


@pytest.mark.parametrize("case", ["resnet50_b64", "nanogpt_fp32"])
def test_checkpointing_of_a_corpus_script_priced_as_measured(case: str) -> None:
    """Two public scripts, checkpointed by hand and measured alone on the H200 (ResNet-50: 16
    bottleneck blocks, 5.909 -> 2.688 GB; nanoGPT: 12 blocks, 13.543 -> 9.007 GB). A ResNet
    block allocates its batch norm's statistics and its downsample branch after its output, so
    the last block a layer allocates is not the output checkpointing keeps: taken for it, the
    output went too and the saving read 3.815 GB (+18 %). The output is the layer's first
    block freed in the backward."""
    step = memory_step(history(case), captured(case))
    assert step.heavy is not None
    fix = {f.id: f for f in memory_fixes(step)}["checkpointing"]
    assert within(fix.saves_bytes, _measured_saving(case), 1)


def test_autocast_priced_from_the_replayed_graph() -> None:
    """With the step's graph replayed under autocast: its saved bytes less theirs (the peak is in
    the backward, every saved tensor live); without one: half the saved activations, at most."""
    step = _gpt2()
    assert step.peak_phase == "backward"
    replay = AutocastReplay(saved_bytes=3_000_000_000, autocast_bytes=2_400_000_000, nodes=9,
                            low_precision=False)
    fix = {f.id: f for f in memory_fixes(step, activation_dtype_bytes=4, autocast=replay)}
    assert fix["autocast"].saves_bytes == 600_000_000
    assert "replayed" in fix["autocast"].time_note
    step.peak_phase = "forward"  # a forward peak holds the saved tensors made so far
    part = {f.id: f for f in memory_fixes(step, activation_dtype_bytes=4, autocast=replay)}
    assert part["autocast"].saves_bytes == int(
        600_000_000 * min(step.by_kind["saved_activations"] / 3_000_000_000, 1.0))
    replay.low_precision = True  # autocast already on: nothing to offer
    assert "autocast" not in {f.id for f in memory_fixes(step, activation_dtype_bytes=4,
                                                          autocast=replay)}
    bound = {f.id: f for f in memory_fixes(step, activation_dtype_bytes=4)}
    assert bound["autocast"].saves_bytes == step.by_kind["saved_activations"] // 2
    assert "at most" in bound["autocast"].time_note
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
    """Priced as the reserved bytes less what the replayed expandable segment reserves: its
    holes stay mapped, so not all the slack above the peak goes."""
    frag = memory_step(history("fragmented"))
    fixes = {f.id: f for f in memory_fixes(frag)}
    t = truth("fragmented")
    assert frag.expandable_reserved_bytes is not None
    assert frag.peak_bytes < frag.expandable_reserved_bytes < t["memory_reserved"]
    saves = fixes["expandable_segments"].saves_bytes
    assert saves == t["memory_reserved"] - frag.expandable_reserved_bytes
    assert saves < t["memory_reserved"] - frag.peak_bytes
    assert "expandable_segments" not in {f.id for f in memory_fixes(_gpt2())}  # 3 % slack


def test_expandable_segments_of_a_corpus_script_priced_as_measured() -> None:
    """ResNet-50 alone on the H200: 7.049 GB reserved at a 5.909 GB peak, 6.010 GB reserved with
    expandable segments: 1.038 GB freed, where all the slack (1.167 GB above the history's peak)
    read +12 %."""
    step = memory_step(history("resnet50_b64"), captured("resnet50_b64"))
    fix = {f.id: f for f in memory_fixes(step)}["expandable_segments"]
    t = truth("resnet50_b64")
    measured = t["memory_reserved"] - t["expandable_memory_reserved"]
    assert within(fix.saves_bytes, measured, 3)


def test_set_to_none_only_where_gradients_are_kept() -> None:
    step = _gpt2()  # the recording frees them (set_to_none=True): nothing to offer
    assert "set_to_none" not in {f.id for f in memory_fixes(step)}
    # as with zero_grad(): the gradients, at their known addresses, live through the peak
    step.gradients_kept_bytes = truth("gpt2")["gradients_bytes"]
    assert {f.id: f for f in memory_fixes(step)}["set_to_none"].saves_bytes == truth("gpt2")[
        "gradients_bytes"
    ]
    # gradients live at the peak but from this step's own first micro-batch: not offered
    step.gradients_kept_bytes, step.by_kind["gradients"] = 0, truth("gpt2")["gradients_bytes"]
    assert "set_to_none" not in {f.id for f in memory_fixes(step)}


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
    assert pm is not None and pm.limit_bytes is not None and pm.layers is not None
    # it failed in the 2nd of 6 layers: the step would have held 6/1.3 times more by their end
    assert (pm.layers.begun, pm.layers.total) == (2, 6) and 1 < pm.layers.done < 2
    growth = oom_growth(pm)
    assert growth == OOM_STEP_GROWTH * 6 / pm.layers.done
    fixes = {f.id: f for f in oom_fixes(pm)}
    over = pm.state_bytes + growth * (pm.step_bytes + pm.requested_bytes) - pm.limit_bytes
    assert fixes["micro_batches"].saves_bytes >= over
    assert fixes["micro_batches"].title.startswith("16 ")  # twice what it held: 4
    assert "expandable_segments" not in fixes  # 776 KiB reserved-but-free: not fragmentation


def _acceptance_oom(done: float) -> OomPostMortem:
    """The H200 acceptance's failure (GPT-2, 12 layers, batch 16, 8 GiB cap) as its report
    recorded it; it failed in the MLP of the 6th layer (20 GELU blocks: 5 layers' 4 each)."""
    o = json.loads((MEMORY / "acceptance_h200.json").read_text())["oom"]
    rec = o["capture"]["memory"]["oom"]
    frag = Fragmentation(rec["reserved_bytes"], rec["allocated_bytes"], 0,
                         rec["largest_free_bytes"], None, False)
    return OomPostMortem(rec["requested_bytes"], rec["allocated_bytes"], rec["limit_bytes"],
                         rec["step_bytes"], rec["state_bytes"], [], frag, False, "",
                         LayerProgress("modeling_gpt2.py:305", 6, done, 12))


def test_oom_split_priced_from_the_layers_run_fits_where_twice_did_not() -> None:
    """Measured on the H200: 4 micro-batches (twice what it held) ran out of memory, 8 fit."""
    o = json.loads((MEMORY / "acceptance_h200.json").read_text())["oom"]
    assert o["fix_title"].startswith("4 ") and "out of memory" in o["fixed"]["oom"]
    fit = {s["k"]: s for s in o["larger_splits"]}[8]
    assert fit["max_memory_allocated"] < o["cap_bytes"]
    for done in (5.0, 6.0):  # the failing layer not begun / complete: either way
        fix = {f.id: f for f in oom_fixes(_acceptance_oom(done))}["micro_batches"]
        assert fix.title.startswith("8 ")


def _autocast_priced(case: str) -> tuple[int, int]:
    """The autocast fix priced from a corpus recording (its graph replayed, the held outputs
    and their gradients from its history), and the H200's measured saving (truth file)."""
    from memory_recordings import _snapshot

    from jupyter_gpuprof.analysis.autocast_dtypes import autocast_replay

    step = memory_step(history(case), captured(case))
    replay = autocast_replay(_snapshot(case)["jupyter_gpuprof"]["graph"])
    fix = {f.id: f for f in memory_fixes(step, activation_dtype_bytes=4, autocast=replay)}
    t = truth(case)
    measured = t["max_memory_allocated"] - t["autocast_max_memory_allocated"]
    return fix["autocast"].saves_bytes, measured


def test_autocast_counts_the_outputs_the_loop_holds_and_their_gradients() -> None:
    """nanoGPT keeps `logits` through the backward (`logits, loss = model(X, Y)`): under autocast
    the lm_head's output is bf16 and so is its gradient at the loss's backward peak. The graph
    alone (what autograd saved) priced 1.88 GB against 3.51 GB measured (-46 %)."""
    predicted, measured = _autocast_priced("nanogpt_fp32")
    assert within(predicted, measured, 10)
    step = memory_step(history("nanogpt_fp32"), captured("nanogpt_fp32"))
    logits = 8 * 1024 * 50304 * 4  # fp32 logits of one micro-batch: held, and its gradient
    assert step.autocast_held_bytes == logits  # half of each of the two
    assert not within(predicted - step.autocast_held_bytes, measured, 10)


def test_autocast_keeps_batch_norm_in_its_inputs_dtype() -> None:
    """ResNet-50: cuDNN batch norm takes the convolution's bf16 output with fp32 weights and
    statistics and returns bf16; taken as the widest input (fp32), the replay priced 0.10 GB
    against 2.61 GB measured."""
    predicted, measured = _autocast_priced("resnet50_b64")
    assert within(predicted, measured, 10)
