"""Compile and CUDA-graph fixes written for the loop that ran (advice/loop_terms.py)."""

from __future__ import annotations

from jupyter_gpuprof.advice import fixes
from jupyter_gpuprof.advice.findings import Finding, FindingData
from jupyter_gpuprof.advice.loop_terms import (
    ALREADY_COMPILED,
    GRAPHS_LINE,
    MARK_PER_STEP,
    in_loop_terms,
)


def _launch() -> Finding:
    return Finding("launch-overhead", "launch", "t", "e", fixes.LAUNCH, 1.0, 30.0,
                   FindingData(kernels_per_step=100.0))


def _memory() -> Finding:
    return Finding("fusion", "memory", "t", "e", fixes.MEMORY, 1.0, 10.0, FindingData())


def _training(**kw):
    return {"optimizer_steps": 30, "steps_by": "optimizer.step()", "backward_steps": 0,
            "micro_batches_per_step": 1.0, "optimizers_per_step": 1.0,
            "closure_evaluations_per_step": 0.0, "cuda_graph_replays": 0,
            "compiled_graphs": 0, **kw}


def test_a_plain_loop_keeps_the_fix_as_it_is():
    (f,) = in_loop_terms([_launch()], _training())
    assert f.fix == fixes.LAUNCH and "try_fixes" not in f.data
    assert in_loop_terms([_launch()], None)[0].fix == fixes.LAUNCH


def test_gradient_accumulation_marks_each_optimizer_step_for_the_graphs():
    """Measured on the H200 (docs/evidence/graphs_accumulation_h200.json): four micro-batches
    under reduce-overhead crash unmarked and marked per micro-batch, and match eager's
    gradients marked once per optimizer step."""
    (f,) = in_loop_terms([_launch()], _training(micro_batches_per_step=4.0))
    lines = f.fix.splitlines()
    assert lines[lines.index(GRAPHS_LINE) + 1] == MARK_PER_STEP


def test_a_gan_marks_once_per_iteration_of_its_optimizers():
    (f,) = in_loop_terms([_launch()], _training(optimizers_per_step=2.0))
    assert "once per iteration" in f.fix and "2 optimizers" in f.fix
    assert MARK_PER_STEP not in f.fix


def test_a_compiled_model_gets_the_mode_on_its_own_compile_call_and_the_graphs_try():
    launch, memory = in_loop_terms([_launch(), _memory()], _training(compiled_graphs=3))
    assert ALREADY_COMPILED in launch.fix and "in place of your torch.compile(model)" in launch.fix
    assert launch.data["try_fixes"] == ["graphs"]
    assert "model = torch.compile(model)" not in memory.fix
    assert "compiled already" in memory.fix
