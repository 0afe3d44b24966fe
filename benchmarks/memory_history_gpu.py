"""Record CUDA allocator histories with their ground truth, for the memory analysis's CPU tests.

    python benchmarks/memory_history_gpu.py OUTDIR            (GPU host; transformers for gpt2)

Three cases, each a `torch.cuda.memory._snapshot()` taken with the allocator history on
(`_record_memory_history(max_entries=…, context="all", stacks="python")`), written as
gzipped JSON with file paths made neutral (`<site-packages>/…`, `<script>`), beside a JSON of
what was measured independently of the history:

* `gpt2`: a Hugging Face GPT-2 (6 layers, d=768, fp32 weights, AdamW), 2 warm-up steps, then 2
  recorded steps, each phase in the capture's record_function ranges (`forward`, `backward`,
  `optimizer`: the snapshot's external annotations); truth, with each kind's addresses:
  bytes of parameters, gradients, optimizer state (from the objects
  themselves), activations saved for backward (unique storages seen by
  `saved_tensors_hooks`), `max_memory_allocated` / `memory_reserved` over the recorded steps.
* `fragmented`: a loop over variable-length batches (a small MLP on random lengths) whose
  freed blocks cannot be reused by the next shape: reserved far above allocated.
* `oom`: the same GPT-2 with the process capped (`set_per_process_memory_fraction`) and a
  batch too large for the cap; the snapshot taken in the `except torch.OutOfMemoryError`,
  taken by an out-of-memory observer at the failing allocation (before the exception unwinds
  the step's tensors), with the error's text.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memory_models import gpt2 as _gpt2  # noqa: E402 - the benchmarks' shared models

SITE = os.path.dirname(os.path.dirname(torch.__file__))
HERE = os.path.abspath(__file__)


def _neutral(path: str) -> str:
    """No machine paths in the data: the site-packages prefix and this script renamed."""
    if path == HERE:
        return "<script>"
    if path.startswith(SITE):
        return "<site-packages>" + path[len(SITE):]
    return os.path.basename(path)


def _clean(obj: Any) -> Any:
    """The snapshot as plain JSON, every frame's filename neutral."""
    if isinstance(obj, dict):
        return {k: (_neutral(v) if k == "filename" and isinstance(v, str) else _clean(v))
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def _write(out: Path, name: str, snapshot: dict[str, Any], truth: dict[str, Any]) -> None:
    with gzip.open(out / f"{name}.snapshot.json.gz", "wt", compresslevel=9) as f:
        json.dump(_clean(snapshot), f, separators=(",", ":"))
    truth = {**truth, "torch": torch.__version__, "device": torch.cuda.get_device_name(0)}
    (out / f"{name}.truth.json").write_text(json.dumps(truth, indent=1))
    print(name, json.dumps(truth)[:600], flush=True)


def _storages(tensors: list[torch.Tensor]) -> dict[int, int]:
    """Each CUDA storage once: its address and bytes."""
    seen: dict[int, int] = {}
    for t in tensors:
        if t.is_cuda:
            s = t.untyped_storage()
            seen[s.data_ptr()] = s.nbytes()
    return seen


def _storage_bytes(tensors: list[torch.Tensor]) -> int:
    return sum(_storages(tensors).values())


def gpt2_case(out: Path, batch: int = 8, seq: int = 512) -> None:
    torch.manual_seed(0)
    model = _gpt2()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randint(0, 50257, (batch, seq), device="cuda")
    saved: list[torch.Tensor] = []

    grads: list[torch.Tensor] = []

    def step(record: bool = False) -> None:
        """One training step in the phase ranges the capture emits (its record_function names)."""
        from torch.profiler import record_function

        def pack(t: torch.Tensor) -> torch.Tensor:
            saved.append(t)
            return t

        with record_function("forward"):
            if record:
                with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                    loss = model(x, labels=x).loss
            else:
                loss = model(x, labels=x).loss
        with record_function("backward"):
            loss.backward()
        if record:
            grads.extend(p.grad for p in model.parameters() if p.grad is not None)
        with record_function("optimizer"):
            opt.step()
            opt.zero_grad(set_to_none=True)

    for _ in range(2):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=50_000, context="all", stacks="python")
    t0 = time.perf_counter()
    for i in range(2):
        step(record=(i == 1))
    torch.cuda.synchronize()
    step_ms = (time.perf_counter() - t0) * 500
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    params = list(model.parameters())
    state = [v for st in opt.state.values() for v in st.values() if torch.is_tensor(v)]
    truth = {
        "case": "gpt2", "model": "GPT2LMHeadModel n_layer=6 n_embd=768 fp32, AdamW",
        "batch": batch, "seq": seq, "steps_recorded": 2, "recorded_step_ms": round(step_ms, 2),
        "parameters_bytes": _storage_bytes(params),
        "optimizer_state_bytes": _storage_bytes(state),
        "gradients_bytes": sum(p.numel() * p.element_size() for p in params),
        "saved_for_backward_bytes": _storage_bytes(saved),
        # addresses (storage start, bytes) of each kind, for attribution tests; gradients and
        # saved tensors as they were in the second recorded step
        "addresses": {"parameters": sorted(_storages(params).items()),
                      "optimizer_state": sorted(_storages(state).items()),
                      "gradients": sorted(_storages(grads).items()),
                      "saved_for_backward": sorted(_storages(saved).items())},
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "memory_allocated_after": torch.cuda.memory_allocated(),
    }
    _write(out, "gpt2", snap, truth)
    torch.cuda.empty_cache()


def fragmented_case(out: Path) -> None:
    torch.cuda.empty_cache()  # the GPT-2 case's cached segments are not this case's
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                              torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=1e-3)
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=50_000, context="all", stacks="python")
    gen = torch.Generator().manual_seed(1)
    keep: list[torch.Tensor] = []
    for i in range(60):
        n = int(torch.randint(256, 8192, (1,), generator=gen))
        x = torch.randn(n, 1024, device="cuda")
        loss = net(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i % 7 == 0:  # a few long-lived small tensors pin the segments they sit in
            keep.append(torch.empty(n * 3, device="cuda"))
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    truth = {"case": "fragmented", "steps_recorded": 60,
             "max_memory_allocated": torch.cuda.max_memory_allocated(),
             "memory_reserved": torch.cuda.memory_reserved(),
             "memory_allocated_after": torch.cuda.memory_allocated(),
             "kept_bytes": _storage_bytes(keep)}
    _write(out, "fragmented", snap, truth)
    torch.cuda.empty_cache()


def oom_case(out: Path, fraction: float = 0.06, batch: int = 64, seq: int = 1024) -> None:
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction(fraction)
    torch.manual_seed(0)
    model = _gpt2()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=50_000, context="all", stacks="python")
    error, at_oom = "", {}

    def observer(device: int, alloc: int, device_alloc: int, device_free: int) -> None:
        """At the failing allocation, before the exception unwinds the step's tensors."""
        at_oom.update(snapshot=torch.cuda.memory._snapshot(), requested=alloc,
                      device_allocated=device_alloc, device_free=device_free)

    torch._C._cuda_attach_out_of_memory_observer(observer)
    try:
        x = torch.randint(0, 50257, (batch, seq), device="cuda")
        loss = model(x, labels=x).loss
        loss.backward()
        opt.step()
    except torch.OutOfMemoryError as exc:
        error = str(exc).splitlines()[0]
    snap = at_oom.pop("snapshot", None) or torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    total = torch.cuda.get_device_properties(0).total_memory
    truth = {"case": "oom", "batch": batch, "seq": seq, "fraction": fraction,
             "cap_bytes": int(total * fraction), "error": error,
             "max_memory_allocated": torch.cuda.max_memory_allocated(),
             "memory_reserved": torch.cuda.memory_reserved(),
             "memory_allocated_after_unwind": torch.cuda.memory_allocated(),
             "snapshot_taken": "at the failing allocation" if at_oom else "after the exception",
             **{f"observer_{k}": v for k, v in at_oom.items()}}
    _write(out, "oom", snap, truth)


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    gpt2_case(out)
    fragmented_case(out)
    oom_case(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
