"""Which framework drives the training, read from its live Trainer object (never imported here).

The settings that change a fix (precision, DataLoader workers, compile, gradient accumulation)
and the number of optimizer steps the training will run are read from the Hugging Face or
Lightning Trainer. The callbacks hand their trainer in; the magic and `jupyter gpuprof run` find
it once, at the first optimizer step, on the call stack that leads to that step (the one
moment every framework is certainly inside its own training loop, whatever the import order).
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

from ..store.meta_blocks import FrameworkMeta

#: TrainingArguments fields that change what the advice says
HF_ARGS = ("bf16", "fp16", "tf32", "dataloader_num_workers", "dataloader_pin_memory",
           "torch_compile", "gradient_accumulation_steps", "per_device_train_batch_size")
_LIGHTNING_MODULES = ("lightning.pytorch", "pytorch_lightning")
_MAX_FRAMES = 80  # the optimizer hook sits a few dozen frames below Trainer.fit at most


#: a setting as the run keeps it: a JSON scalar (anything else by its str())
Plain = bool | int | float | str | None


def _plain(value: object) -> Plain:
    return value if isinstance(value, (bool, int, float, str, type(None))) else str(value)


def _hf_trainer_class() -> Any:
    mod = sys.modules.get("transformers.trainer")
    return getattr(mod, "Trainer", None)


def _lightning_trainer_classes() -> tuple[type, ...]:
    found = []
    for name in _LIGHTNING_MODULES:
        mod = sys.modules.get(name + ".trainer.trainer")
        cls = getattr(mod, "Trainer", None)
        if cls is not None:
            found.append(cls)
    return tuple(found)


def describe_hf(trainer: Any) -> FrameworkMeta:
    """The `framework` block for a transformers Trainer: its TrainingArguments that matter."""
    import transformers

    args = trainer.args
    state = getattr(trainer, "state", None)
    info: FrameworkMeta = {
        "name": "transformers",
        "version": transformers.__version__,
        "args": {k: _plain(getattr(args, k, None)) for k in HF_ARGS},
    }
    max_steps = getattr(state, "max_steps", 0) or 0
    if max_steps > 0:
        info["max_steps"] = int(max_steps)
        info["global_step"] = int(getattr(state, "global_step", 0) or 0)
    return info


def describe_lightning(trainer: Any) -> FrameworkMeta:
    """The `framework` block for a Lightning Trainer: precision, accumulation, step budget."""
    mod = sys.modules.get("lightning") or sys.modules.get("pytorch_lightning")
    info: FrameworkMeta = {
        "name": "lightning",
        "version": getattr(mod, "__version__", None),
        "args": {
            "precision": _plain(getattr(trainer, "precision", None)),
            "accumulate_grad_batches": _plain(getattr(trainer, "accumulate_grad_batches", None)),
        },
    }
    combined = getattr(getattr(trainer, "fit_loop", None), "_combined_loader", None)
    loaders = list(getattr(combined, "flattened", None) or [])
    if loaders and getattr(loaders[0], "num_workers", None) is not None:
        info["args"]["num_workers"] = int(loaders[0].num_workers)
        info["args"]["pin_memory"] = bool(getattr(loaders[0], "pin_memory", False))
    try:
        total = int(trainer.estimated_stepping_batches)
    except Exception:  # noqa: BLE001 - infinite or not yet known: no step budget
        total = 0
    if 0 < total < 10**9:
        info["max_steps"] = total
        info["global_step"] = int(getattr(trainer, "global_step", 0) or 0)
    return info


def describe_trainer(trainer: Any) -> FrameworkMeta | None:
    """The `framework` block for a trainer object of either framework, else None."""
    hf = _hf_trainer_class()
    if hf is not None and isinstance(trainer, hf):
        return describe_hf(trainer)
    lightning = _lightning_trainer_classes()
    if lightning and isinstance(trainer, lightning):
        return describe_lightning(trainer)
    return None


def find_on_stack() -> FrameworkMeta | None:
    """The framework block of the Trainer whose loop called us, or None (plain torch loop)."""
    hf = _hf_trainer_class()
    lightning = _lightning_trainer_classes()
    if hf is None and not lightning:
        return None
    frame: FrameType | None = sys._getframe(1)
    for _ in range(_MAX_FRAMES):
        if frame is None:
            break
        owner = frame.f_locals.get("self")
        for candidate in (owner, _attached_trainer(owner) if lightning else None):
            if candidate is None:
                continue
            if hf is not None and isinstance(candidate, hf):
                return describe_hf(candidate)
            if lightning and isinstance(candidate, lightning):
                return describe_lightning(candidate)
        frame = frame.f_back
    return None


def _attached_trainer(owner: Any) -> Any:
    """`owner.trainer` (Lightning loops and modules hold one); a detached module raises."""
    try:
        return getattr(owner, "trainer", None)
    except Exception:  # noqa: BLE001
        return None


def steps_left(framework: FrameworkMeta | None) -> int | None:
    """Optimizer steps the training still runs, counting the one just taken; None if unknown."""
    if not framework or "max_steps" not in framework:
        return None
    return int(framework["max_steps"]) - int(framework.get("global_step", 0))
