"""A compiled model stays compiled under the capture: the probed warm-up step runs eagerly.

The oracle is the trace itself: every profiled step must call the compiled forward, and the
capture may not make Dynamo compile a graph the program would not have compiled on its own.
"""

from __future__ import annotations

import pytest
import torch
from capture_fixtures import Trainer, profiler_steps, trace_names

import jupyter_gpuprof
from jupyter_gpuprof.capture import eager_probe
from jupyter_gpuprof.capture.eager_probe import EagerProbeStep
from jupyter_gpuprof.capture.training import compiled_graphs
from jupyter_gpuprof.store import RunStore

SMALL = dict(steps=3, warmup=2, wait=0, prof_warmup=1, active=2)
NEEDED = 1 + 2 + 3 + (0 + 1 + 2)

pytestmark = pytest.mark.skipif(not hasattr(torch.compiler, "set_stance"),
                                reason="torch.compiler.set_stance is torch >= 2.6")


def compiled_trainer() -> Trainer:
    """The capture's tiny MLP with its model compiled, and compiled once before the capture."""
    torch._dynamo.reset()
    t = Trainer()
    t.model = torch.compile(t.model)
    t.step()
    return t


def capture(tmp_path, t: Trainer) -> tuple[object, int]:
    """Capture the compiled loop; the run and the graphs Dynamo built during the capture."""
    before = compiled_graphs()
    with jupyter_gpuprof.profile("compiled", runs_root=tmp_path, **SMALL):
        for _ in range(NEEDED):
            t.step()
    (run,) = RunStore(tmp_path).list()
    return run, compiled_graphs() - before


def compiled_calls(run) -> int:
    """Calls of the AOT-compiled forward in the profiled steps (an eager step has none)."""
    names = trace_names(run.trace_paths()[0])
    assert profiler_steps(names) == SMALL["active"]
    return names["CompiledFunction"]


def test_a_compiled_model_runs_compiled_code_in_every_profiled_step(tmp_path):
    run, new_graphs = capture(tmp_path, compiled_trainer())
    assert run.meta.status == "complete"
    assert compiled_calls(run) == SMALL["active"]
    assert new_graphs == 0
    # the probes still saw the step: FLOPs of the eager ops, the user's lines
    assert run.meta.flops_per_step and run.meta.flops_per_step > 0
    assert run.meta.callsites


def test_without_the_eager_step_the_probes_decompile_the_model(tmp_path, monkeypatch):
    """The rule's own check: probing the compiled step directly leaves no compiled region."""
    monkeypatch.setattr(EagerProbeStep, "begin", lambda self: True)
    run, _ = capture(tmp_path, compiled_trainer())
    assert compiled_calls(run) == 0


def test_the_users_stance_is_given_back():
    probe = EagerProbeStep()
    with torch.compiler.set_stance("eager_on_recompile"):
        assert probe.begin() and probe.active
        probe.end()
        assert torch.compiler.is_compiling() is False
        assert torch._dynamo.eval_frame._stance.stance == "eager_on_recompile"
    assert torch._dynamo.eval_frame._stance.stance == "default"


def test_a_torch_without_stances_skips_the_probes_of_a_compiled_model(monkeypatch):
    monkeypatch.delattr(torch.compiler, "set_stance")
    monkeypatch.setattr(eager_probe, "compiled_graphs", lambda: 1)
    probe = EagerProbeStep()
    assert probe.begin() is False and probe.skipped == eager_probe.NO_STANCE
    monkeypatch.setattr(eager_probe, "compiled_graphs", lambda: 0)
    assert EagerProbeStep().begin() is True  # nothing compiled: probe the step as it runs


def test_a_compiled_gpt_trainer_recorded_on_the_h200_ran_compiled_under_the_capture():
    """nanoGPT bf16 with its own torch.compile, under `jupyter gpuprof run` on the H200: before
    the eager probe step none of its 13,692 kernels was Triton's and the step ran 129.6 ms
    against 107 ms alone; now every profiled step calls the compiled forward of each of its 4
    micro-batches, Triton kernels run, and the baseline reads the script's own clock."""
    import gzip
    import json

    from paths import ROOT

    folder = ROOT / "tests" / "data" / "corpus" / "nanogpt-bf16-compiled"
    with gzip.open(folder / "trace.json.gz") as f:
        events = json.load(f)["traceEvents"]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")
             and e.get("cat") == "user_annotation"]  # the host's steps (the GPU's lag behind)
    assert len(steps) == 3
    compiled = [e for e in events if e.get("name") == "CompiledFunction"]
    for s in steps:
        inside = [e for e in compiled if s["ts"] <= e["ts"] < s["ts"] + s["dur"]]
        assert len(inside) == 4, s["name"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert sum("triton" in e["name"] for e in kernels) > len(kernels) / 4
    evidence = json.loads((ROOT / "docs" / "evidence" / "observer_h200.json").read_text())
    (run,) = [r for r in evidence["results"] if r["id"] == "nanogpt-bf16-compiled"]
    ratio = run["tool"]["steps"]["median_ms"] / run["plain"]["median_ms"]
    assert abs(ratio - 1) <= 0.03
