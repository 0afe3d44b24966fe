"""The precision fix shown is the one priced: where the host sets the pace once the fp32
matmuls run on Tensor Cores, TF32 alone (it adds no kernel); bf16 autocast, whose casts the
host would issue, only where the GPU still sets the pace. Measured on an H100 on the lecture
GPT of karpathy/ng-video-lecture (docs/benchmarks.md, session 59): TF32 −10 %, autocast +17 %."""

from __future__ import annotations

from dataclasses import replace

from paths import TESTS

from jupyter_gpuprof.advice import fixes
from jupyter_gpuprof.advice.frameworks import framework_fix
from jupyter_gpuprof.advice.precision_by_gpu import host_paces_after
from jupyter_gpuprof.report import analyze_path

#: a 2021 CNN trace (cuDNN fp32 convolutions) whose host paces the step once they are fast
HOST_PACED = TESTS / "data/wild/kineto/autograd_api_2021-01/worker0.pt.trace.json.gz"
#: our TinyGPT: its fp32 SIMT GEMMs set the pace beside a DataLoader it waits for
LOADER_PACED = TESTS / "data/real/tinygpt_before"


def _precision(path):
    (f,) = [f for f in analyze_path(path).advice.findings if f.category == "precision"]
    return f


def test_a_host_paced_step_is_shown_tf32_alone():
    f = _precision(HOST_PACED)
    assert f.fix == fixes.TF32 and "autocast" not in f.fix.split("#")[0]
    assert "the host sets the pace" in f.evidence


def test_a_step_paced_by_its_data_and_its_gpu_keeps_the_bf16_fix():
    """TinyGPT's step after the fix is longer than its GPU work only by its wait for data:
    the host's issuing does not set the pace, so the fix keeps autocast (measured there: bf16
    and the loader fix, 46.5 → 18.4 ms)."""
    f = _precision(LOADER_PACED)
    assert f.fix == fixes.PRECISION


def test_host_paced_is_the_predicted_step_beyond_the_gpu_work_left():
    # 40 ms busy, 30 of them SIMT matmuls at 4×: 17.5 ms of GPU work left
    assert host_paces_after(30.0, 40.0, 30.0) == 17.5
    assert host_paces_after(20.0, 40.0, 30.0) is None  # within 25 %: the GPU's pace
    assert host_paces_after(None, 40.0, 30.0) is None


def test_a_trainer_user_is_shown_the_tf32_alone_in_its_own_terms():
    f = _precision(HOST_PACED)
    hf = framework_fix(f, {"name": "transformers", "args": {}})
    assert "tf32=True" in hf and "bf16=True," not in hf
    both = framework_fix(replace(f, fix=fixes.PRECISION), {"name": "transformers", "args": {}})
    assert both == fixes.HF_PRECISION
