"""Training-step workloads with one deliberate bottleneck each.

Every builder takes ``device`` (``"cuda"`` or ``"cpu"``) and returns a :class:`Workload`
whose ``step()`` runs one training step (or one step of the loop the bottleneck lives in).
They are small enough to build in a few seconds and are seeded, so two runs launch the same
kernels in the same order (timings still vary).

The *intended* bottleneck is a design intent only: ``capture_workloads.py`` measures where
the time really goes and stores that next to the trace (``ground_truth`` in ``meta.json``).

    python benchmarks/workloads.py            # list them
    python benchmarks/workloads.py launch 3   # build one and run 3 steps (CPU works too)
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


@dataclass
class Workload:
    name: str
    step: Callable[[], None]
    description: str
    intended: str
    # free-form facts about the build (shapes, dtypes) that end up in meta.json
    config: dict = field(default_factory=dict)


def _seed(seed: int = 0) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)


def _mm_dtype(device: str) -> torch.dtype:
    # bf16 on the GPU; on CPU too (slow but it runs) so the CPU dry run builds the same graph
    return torch.bfloat16


def _set_fp32_matmul(ieee: bool) -> None:
    """Full-precision fp32 GEMMs (SIMT sgemm, ``allow_tf32=False``) or TF32, on old and new torch."""
    import warnings

    matmul = torch.backends.cuda.matmul
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch >= 2.9 calls the flag legacy
            matmul.allow_tf32 = not ieee
    except Exception:  # pragma: no cover - only the new API left
        matmul.fp32_precision = "ieee" if ieee else "tf32"


# --------------------------------------------------------------------------------- input
class _HeavyTransformDataset(torch.utils.data.Dataset):
    """Synthetic images whose per-sample transform is slow Python/numpy work (~1 ms)."""

    def __init__(self, n: int, shape=(3, 32, 32), work: int = 6000, seed: int = 0):
        self.n, self.shape, self.work = n, shape, work
        self.seed = seed

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        rng = np.random.default_rng(self.seed + i)
        img = rng.standard_normal(self.shape).astype(np.float32)
        # "augmentation": per-pixel Python work, the kind a hand-written transform does
        acc = 0.0
        flat = img.ravel()
        for k in range(self.work):
            acc += math.tanh(flat[k % flat.size]) * 0.5
        img = (img - img.mean()) / (img.std() + 1e-6)
        img = np.flip(img, axis=2).copy()
        label = int(acc * 1000) % 10
        return torch.from_numpy(img), label


def build_input(device: str, batch: int = 16, work: int = 6000) -> Workload:
    _seed()
    ds = _HeavyTransformDataset(n=batch * 64, work=work)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch, shuffle=False, num_workers=0)
    dt = _mm_dtype(device)
    model = nn.Sequential(
        nn.Flatten(), nn.Linear(3 * 32 * 32, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 10)
    ).to(device=device, dtype=dt)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    state = {"it": iter(loader)}

    def step() -> None:
        try:
            x, y = next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            x, y = next(state["it"])
        x = x.to(device, dtype=dt)
        y = y.to(device)
        loss = F.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "input", step,
        f"DataLoader num_workers=0, batch {batch}, ~1 ms of Python/numpy transform per sample; 3-layer bf16 MLP",
        "input pipeline (DataLoader on the critical path, GPU mostly idle)",
        {"batch": batch, "transform_iters_per_sample": work, "num_workers": 0, "dtype": str(dt)},
    )


# ---------------------------------------------------------------------------------- sync
def build_sync(device: str, batch: int = 1024, d: int = 2048, layers: int = 12) -> Workload:
    if device == "cpu":
        batch, d = 128, 512
    _seed()
    dt = _mm_dtype(device)
    blocks = nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(layers)]).to(device=device, dtype=dt)
    opt = torch.optim.SGD(blocks.parameters(), lr=1e-4)
    x = torch.randn(batch, d, device=device, dtype=dt)
    log: list[float] = []

    def step() -> None:
        h = x
        for lin in blocks:
            h = F.gelu(lin(h))
            # per-layer logging that forces a device->host copy and a stream sync
            log.append(h.float().pow(2).mean().item())
        loss = h.float().pow(2).mean()
        loss.backward()
        for p in blocks.parameters():
            log.append(p.grad.norm().item())  # per-parameter grad norm, one sync each
        opt.step()
        opt.zero_grad(set_to_none=True)
        if len(log) > 10_000:
            del log[:]

    return Workload(
        "sync", step,
        f"{layers} bf16 Linear({d},{d}) layers, batch {batch}; .item() after every layer and per grad norm "
        f"({2 * layers} host syncs per step)",
        "host-device synchronization (GPU idles after each .item())",
        {"batch": batch, "d": d, "layers": layers, "items_per_step": 2 * layers, "dtype": str(dt)},
    )


# -------------------------------------------------------------------------------- launch
def build_launch(device: str, batch: int = 8, d: int = 64, blocks: int = 48) -> Workload:
    _seed()
    layers: list[nn.Module] = []
    for _ in range(blocks):
        layers += [nn.Linear(d, d), nn.LayerNorm(d)]
    model = nn.Sequential(*layers).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)  # foreach: a few multi-tensor kernels
    x = torch.randn(batch, d, device=device)

    def step() -> None:
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "launch", step,
        f"{2 * blocks} tiny ops in sequence (Linear({d},{d}) + LayerNorm({d}) x {blocks}) on a batch of {batch}, fp32",
        "kernel-launch overhead (thousands of ~us kernels, CPU-bound launching)",
        {"batch": batch, "d": d, "blocks": blocks, "dtype": "torch.float32"},
    )


# ------------------------------------------------------------------ precision / compute
def _gemm_stack(device: str, dt: torch.dtype, batch: int, d: int, layers: int):
    _seed()
    model = nn.Sequential(*[nn.Linear(d, d, bias=False) for _ in range(layers)]).to(device=device, dtype=dt)
    opt = torch.optim.SGD(model.parameters(), lr=1e-5)
    x = torch.randn(batch, d, device=device, dtype=dt)
    return model, opt, x


def build_precision(device: str, batch: int = 4096, d: int = 8192, layers: int = 4) -> Workload:
    if device == "cpu":  # keep the CPU dry run quick
        batch, d = 256, 512
    model, opt, x = _gemm_stack(device, torch.float32, batch, d, layers)

    def step() -> None:
        _set_fp32_matmul(ieee=True)  # TF32 off: full fp32 SIMT sgemm kernels
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "precision", step,
        f"{layers} fp32 Linear({d},{d}) layers, batch {batch}, TF32 disabled (allow_tf32=False)",
        "fp32 GEMMs without Tensor Cores (fix: TF32/bf16 autocast)",
        {"batch": batch, "d": d, "layers": layers, "dtype": "torch.float32", "tf32": False},
    )


def build_compute(device: str, batch: int = 4096, d: int = 8192, layers: int = 4) -> Workload:
    if device == "cpu":
        batch, d = 256, 512
    model, opt, x = _gemm_stack(device, torch.bfloat16, batch, d, layers)

    def step() -> None:
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "compute", step,
        f"the same {layers} Linear({d},{d}) layers, batch {batch}, in bf16 (Tensor Cores)",
        "GPU compute (Tensor-Core GEMMs; nothing to fix but the math)",
        {"batch": batch, "d": d, "layers": layers, "dtype": "torch.bfloat16"},
    )


# -------------------------------------------------------------------------------- memory
def build_memory(device: str, batch: int = 32, t: int = 1024, d: int = 1024, depth: int = 6) -> Workload:
    if device == "cpu":
        batch = 2
    _seed()
    ln = nn.ModuleList([nn.LayerNorm(d) for _ in range(depth)]).to(device)
    scale = nn.Parameter(torch.ones(d, device=device))
    opt = torch.optim.SGD(list(ln.parameters()) + [scale], lr=1e-3)
    x = torch.randn(batch, t, d, device=device)

    def step() -> None:
        h = x
        for norm in ln:
            # unfused elementwise chain: each op reads and writes the whole tensor
            r = h
            h = norm(h)
            h = h * scale
            h = F.gelu(h)
            h = h * 0.5 + 0.25
            h = torch.sigmoid(h) * torch.tanh(h)
            h = h + r
        loss = h.square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    numel = batch * t * d
    return Workload(
        "memory", step,
        f"{depth} x (LayerNorm + 8 unfused elementwise ops) on a {batch}x{t}x{d} fp32 tensor "
        f"({numel * 4 / 2**20:.0f} MiB each)",
        "memory bandwidth (elementwise/normalization kernels, no GEMMs)",
        {"shape": [batch, t, d], "depth": depth, "dtype": "torch.float32"},
    )


# ------------------------------------------------------------------------------ transfer
def build_transfer(device: str, mib: int = 256, batch: int = 256, d: int = 1024) -> Workload:
    if device == "cpu":
        mib = 8
    _seed()
    host = torch.randn(mib * 2**20 // 4)  # pageable (not pinned) host memory
    dt = _mm_dtype(device)
    model = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d)).to(device=device, dtype=dt)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step() -> None:
        big = host.to(device)  # synchronous pageable host-to-device copy
        xb = big[: batch * d].view(batch, d).to(dt)
        loss = model(xb).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "transfer", step,
        f"{mib} MiB pageable host tensor copied to the GPU synchronously every step; 2-layer bf16 MLP",
        "host-to-device transfer (pageable, blocking; fix: pin + non_blocking, or keep data on GPU)",
        {"copy_mib": mib, "pinned": False, "non_blocking": False, "dtype": str(dt)},
    )


# ---------------------------------------------------------------------------------- host
def build_host(device: str, batch: int = 8192, d: int = 4096, work: int = 100_000) -> Workload:
    if device == "cpu":
        batch, d = 256, 512
    _seed()
    dt = _mm_dtype(device)
    model = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, d)).to(
        device=device, dtype=dt
    )
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, d, device=device, dtype=dt)
    book = {"hist": np.zeros(64), "ema": 0.0, "seen": 0}
    rng = np.random.default_rng(0)

    def step() -> None:
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        # per-step bookkeeping on the host that launches nothing and never syncs
        vals = rng.standard_normal(4096)
        book["hist"] += np.histogram(vals, bins=64, range=(-4, 4))[0]
        acc = 0
        for k in range(work):
            acc = (acc * 31 + k) % 1_000_003
        book["ema"] = 0.99 * book["ema"] + 0.01 * (acc / 1_000_003)
        book["seen"] += 1

    return Workload(
        "host", step,
        f"3-layer bf16 MLP (batch {batch}, d={d}) then ~10 ms of Python/numpy bookkeeping per step "
        "that launches nothing and does not sync",
        "host-side Python between steps (GPU starved, no sync, no DataLoader)",
        {"batch": batch, "d": d, "python_iters": work, "dtype": str(dt)},
    )


BUILDERS: dict[str, Callable[..., Workload]] = {
    "input": build_input,
    "sync": build_sync,
    "launch": build_launch,
    "precision": build_precision,
    "compute": build_compute,
    "memory": build_memory,
    "transfer": build_transfer,
    "host": build_host,
}


# smaller variants, used when a captured trace comes out over the size budget
SHRINK: dict[str, dict] = {"launch": {"blocks": 24}, "sync": {"layers": 6}, "input": {"batch": 8}}


def build(name: str, device: str, shrink: bool = False) -> Workload:
    return BUILDERS[name](device, **(SHRINK.get(name, {}) if shrink else {}))


def _main(argv: list[str]) -> None:
    if not argv:
        for name in BUILDERS:
            print(name)
        return
    name, n = argv[0], int(argv[1]) if len(argv) > 1 else 3
    device = "cuda" if torch.cuda.is_available() else "cpu"
    t0 = time.perf_counter()
    w = build(name, device)
    print(f"{w.name}: built in {time.perf_counter() - t0:.2f}s on {device}: {w.description}")
    for _ in range(n):
        t0 = time.perf_counter()
        w.step()
        if device == "cuda":
            torch.cuda.synchronize()
        print(f"  step {1e3 * (time.perf_counter() - t0):.2f} ms")


if __name__ == "__main__":
    _main(sys.argv[1:])
