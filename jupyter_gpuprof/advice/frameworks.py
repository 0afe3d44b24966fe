"""Advice in the user's framework: fixes a Trainer user can paste, notes on compiled graphs.

The rules price bottlenecks from the trace alone; this pass reads what the capture saw of the
training (meta `framework` and `training`) and rewrites each fix in the terms of the Trainer
that ran it, unless that Trainer already has the setting (then the plain-torch fix stays).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from ..store.meta_blocks import FrameworkMeta, PlainValue, TrainingMeta
from .findings import Finding
from .fixes import FRAMEWORK_FIXES, TF32
from .verdict import Advice


def _positive(value: object) -> bool:
    """Whether a Trainer argument is a number above 0 (unset counts as 0)."""
    return isinstance(value, (int, float)) and value > 0


#: per framework and category: the setting that, when already on, makes its fix moot
_ALREADY_ON: dict[tuple[str, str], Callable[[Mapping[str, PlainValue]], bool]] = {
    ("transformers", "precision"): lambda a: bool(a.get("bf16") or a.get("fp16")),
    ("transformers", "input"): lambda a: _positive(a.get("dataloader_num_workers")),
    ("transformers", "launch"): lambda a: bool(a.get("torch_compile")),
    ("lightning", "precision"): lambda a: "16" in str(a.get("precision") or ""),
    ("lightning", "input"): lambda a: _positive(a.get("num_workers")),
}

GRAPH_NOTE = ("kernels ran inside CUDA graphs ({replays} replays): per-kernel launch statistics "
              "are not comparable with an eager run")
COMPILE_NOTE = "the model is compiled (torch.compile): kernels are fused, names are Triton's"


def framework_fix(finding: Finding, framework: FrameworkMeta) -> str:
    """The finding's fix as the framework's user writes it (the torch fix when none fits).

    `framework`: meta.json's `framework` (capture/frameworks.py): its `name` and Trainer `args`.
    """
    name = framework.get("name")
    # the TF32-only precision fix (the host sets the pace: precision_by_gpu.host_paces_after)
    key = (str(name), "precision-tf32" if finding.fix == TF32 else finding.category)
    fix = FRAMEWORK_FIXES.get(key)
    already = _ALREADY_ON.get(key)
    if fix is None or (already is not None and already(framework.get("args") or {})):
        return finding.fix
    return fix


def in_framework_terms(advice: Advice, framework: FrameworkMeta | None,
                       training: TrainingMeta | None) -> Advice:
    """The advice with framework fixes and the compiled/graph caveats added to the verdict."""
    findings = advice.findings
    if framework and framework.get("name"):
        findings = [replace(f, fix=framework_fix(f, framework)) for f in findings]
    verdict = advice.verdict
    notes = []
    training = training or {}
    if training.get("cuda_graph_replays"):
        notes.append(GRAPH_NOTE.format(replays=training["cuda_graph_replays"]))
    if training.get("compiled_graphs"):
        notes.append(COMPILE_NOTE)
    if notes:
        verdict = replace(verdict, reasons=[*verdict.reasons, *notes])
    return Advice(verdict, findings)
