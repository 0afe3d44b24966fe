"""Checkpointing's time cost: the kernels its recompute re-runs, priced from the trace and the
allocator history, against the H200 steps measured with and without checkpointing."""

from __future__ import annotations

import gzip
import json
from functools import cache

import msgspec
import numpy as np
import pytest
from memory_recordings import MEMORY, captured, history, truth, within
from paths import ROOT
from recorded_runs import recorded_report

from jupyter_gpuprof.advice.memory_fixes import memory_fixes
from jupyter_gpuprof.analysis.memory_step import memory_step
from jupyter_gpuprof.analysis.recompute_time import (
    ForwardKernels,
    LayerOps,
    StepKernels,
    layer_run,
    recompute_cost,
)
from jupyter_gpuprof.report.memory_summary import forward_kernels
from jupyter_gpuprof.report.model import Timeline

EVIDENCE = ROOT / "docs" / "evidence" / "memory_acceptance_h200_run2.json"


@cache
def _timelines() -> dict[str, Timeline]:
    raw = json.loads(gzip.decompress((MEMORY / "recompute_timelines.json.gz").read_bytes()))
    return {case: msgspec.convert(t, Timeline) for case, t in raw.items()}


def _measured_ms(model: str) -> float:
    """The plain step's median with checkpointing minus without (each its own process)."""
    a = json.loads(EVIDENCE.read_text())["parts"]["A"]["models"][model]
    return float(a["fixes"]["checkpointing"]["median_ms"] - a["plain"]["median_ms"])


@pytest.mark.parametrize(("case", "model", "ops", "skipped"),
                         [("gpt2_12l", "gpt2", 12, 1), ("llama_8l", "llama", 23, 2)])
def test_checkpointing_costs_the_layers_forward_kernels_it_reruns(case, model, ops,
                                                                  skipped) -> None:
    """GPT-2: +44.5 ms predicted, +45.4 measured; Llama: +37.4 predicted, +37.7 measured. The
    forward's GPU time × the layers' share of saved bytes gave +61.8 and +59.0: the backward
    queued before the trace counted as the first step's forward, the head and loss priced as
    layers, and the Llama's down projection priced though the recompute stops before it."""
    step = memory_step(history(case), captured(case))
    assert step.heavy is not None and step.layer_ops == LayerOps(ops, skipped)
    fwd = forward_kernels(_timelines()[case])
    fix = {f.id: f for f in memory_fixes(step, forward=fwd)}["checkpointing"]
    measured = _measured_ms(model)
    assert fix.time_ms is not None and within(fix.time_ms, measured, 15), (fix.time_ms, measured)
    assert f"last {skipped} op(s) not re-run" in fix.time_note


def test_kernels_queued_before_the_trace_are_no_steps_forward() -> None:
    """The first profiled step's forward overlaps the backward queued before the profiler
    started (no recorded launch): both steps hold the same 262 forward kernels."""
    fwd = forward_kernels(_timelines()["gpt2_12l"])
    assert fwd is not None and [len(s.keys) for s in fwd.steps] == [262, 262]
    assert fwd.steps[0].dur_us.sum() == pytest.approx(fwd.steps[1].dur_us.sum(), rel=0.01)
    assert forward_kernels(None) is None


def test_layer_run_finds_the_repeats_not_a_norm_like_the_layers_start() -> None:
    layer = ["norm", "mm", "attn", "mm", "add"]
    keys = ["embed", "dropout", *layer * 3, "norm", "head", "loss"]
    assert layer_run(keys, 3) == (2, 5)
    assert layer_run(keys, 4) is None
    assert layer_run(["a", "b"], 1) is None
    # two layers that launch different kernels: one kernel repeated is not the layers'
    odd = ["embed", "norm", "mm", "mm", "gelu", "norm", "attn", "head"]
    assert layer_run(odd, 2) == (2, 1) and layer_run(odd, 2, min_period=3) is None


def _kernels(keys: list[str], dur: list[float], launch: list[float], gpu_bound: bool,
             scale: float = 1.0) -> ForwardKernels:
    return ForwardKernels([StepKernels(keys, np.array(dur), np.array(launch))], scale, gpu_bound)


def test_the_recompute_skips_the_tail_and_pays_the_host_when_host_bound() -> None:
    keys = ["embed", "a", "b", "c", "a", "b", "c", "head"]
    dur = [5.0, 1000.0, 2000.0, 4000.0, 1000.0, 2000.0, 4000.0, 9000.0]
    launch = [0.0, 10.0, 2010.0, 4010.0, 6010.0, 8010.0, 10010.0, 12010.0]
    cost = recompute_cost(_kernels(keys, dur, launch, True), 2, LayerOps(3, 1), 0.5)
    assert cost is not None and cost.ms == pytest.approx(6.0)  # a + b twice; c not re-run
    host = recompute_cost(_kernels(keys, [d / 10 for d in dur], launch, False, 2.0), 2,
                          LayerOps(3, 1), 0.5)
    assert host is not None and host.ms == pytest.approx(8.0 / 2.0)  # 2 x 4 ms launching, / 2
    assert "host-bound" in host.note


def test_every_micro_batch_recomputes_its_layers() -> None:
    """A step of 2 micro-batches runs its 3 layers twice and recomputes them twice (nanoGPT
    under gradient accumulation: one forward's layers priced 9.9 ms, the step measured +42 ms;
    all four forwards' 39.0 ms)."""
    one = ["embed", "a", "b", "a", "b", "a", "b", "head", "loss"]
    keys = one * 2
    dur = [10.0, 1000.0, 2000.0, 1000.0, 2000.0, 1000.0, 2000.0, 500.0, 50.0] * 2
    cost = recompute_cost(_kernels(keys, dur, list(range(len(keys))), True), 3, LayerOps(2, 0),
                          0.5)
    assert cost is not None and cost.ms == pytest.approx(18.0)  # (a + b) x 3 layers x 2
    assert "2 forwards" in cost.note


def test_without_repeated_kernels_the_forward_is_priced_by_share() -> None:
    cost = recompute_cost(_kernels(["x", "y", "z"], [1000.0, 2000.0, 1000.0], [0, 1, 2], True),
                          2, LayerOps(2, 0), 0.5)
    assert cost is not None and cost.ms == pytest.approx(2.0) and "share" in cost.note
    assert recompute_cost(None, 2, None, 0.5) is None


def test_nanogpts_recompute_priced_on_its_own_trace_as_measured(monkeypatch, tmp_path) -> None:
    """nanoGPT (4 micro-batches): its corpus trace's forward kernels and its H200 allocator
    history price the recompute of 4 x 12 layers against the step measured with its blocks
    checkpointed by hand (213.6 -> 256.0 ms)."""
    import jupyter_gpuprof.report.summarize as summarize
    seen: list[ForwardKernels | None] = []
    original = summarize.memory_blocks

    def keep(path, total, error, forward):  # type: ignore[no-untyped-def]
        seen.append(forward)
        return original(path, total, error, forward)

    monkeypatch.setattr(summarize, "memory_blocks", keep)
    recorded_report(tmp_path, ROOT / "tests" / "data" / "corpus" / "nanogpt-fp32")
    step = memory_step(history("nanogpt_fp32"), captured("nanogpt_fp32"))
    fix = {f.id: f for f in memory_fixes(step, forward=seen[-1])}["checkpointing"]
    t = truth("nanogpt_fp32")
    measured = t["checkpointing_step_median_ms"] - t["step_median_ms"]
    assert fix.time_ms is not None and within(fix.time_ms, measured, 10)


def _analysed(tmp_path, folder: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    return recorded_report(tmp_path, MEMORY / "resnet50_runs" / folder).to_json()


def test_a_resnets_recompute_is_priced_at_its_gpu_time_and_its_host_cost_is_not(tmp_path) -> None:
    """ResNet-50 on the H200 with its 16 bottlenecks checkpointed by hand: the GPU's busy time
    a step rose by the recompute the replay prices (+9.0 ms measured, 9.3 predicted), but the
    step turned host-bound (GPU idle 2.7 -> 16.3 ms a step, the checkpoint's hooks and the
    recompute's launches in the backward): +22.6 ms in all. The price is the GPU part."""
    base, ckpt = _analysed(tmp_path, "base"), _analysed(tmp_path, "checkpointing")
    busy = ckpt["gpu"]["busy_ms_per_step"] - base["gpu"]["busy_ms_per_step"]
    step = memory_step(history("resnet50_b64"), captured("resnet50_b64"))
    tl = msgspec.convert(base["timeline"], Timeline)
    fix = {f.id: f for f in memory_fixes(step, forward=forward_kernels(tl))}["checkpointing"]
    assert fix.time_ms is not None and within(fix.time_ms, busy, 10)
    assert "host" in fix.time_note and "--try checkpoint" in fix.time_note
