"""Workloads whose bottleneck is on the host side of the step: the input pipeline, a host-device
synchronization, a pageable host-to-device copy, and Python bookkeeping between steps.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from workload_base import Workload, _mm_dtype, _py_work, _seed


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


def build_input(device: str, batch: int = 16, work: int = 6000, fixed: bool = False) -> Workload:
    """Input-bound: a DataLoader with slow per-sample transforms and no workers feeds an MLP."""
    _seed()
    ds = _HeavyTransformDataset(n=batch * 64, work=work)
    cuda = device.startswith("cuda")
    workers = (8 if cuda else 2) if fixed else 0
    loader = torch.utils.data.DataLoader(
        ds,
        batch_size=batch,
        shuffle=False,
        num_workers=workers,
        persistent_workers=workers > 0,
        pin_memory=fixed and cuda,
    )
    dt = _mm_dtype(device)
    model = nn.Sequential(
        nn.Flatten(),
        nn.Linear(3 * 32 * 32, 512),
        nn.GELU(),
        nn.Linear(512, 512),
        nn.GELU(),
        nn.Linear(512, 10),
    ).to(device=device, dtype=dt)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    state = {"it": iter(loader)}

    def step() -> None:
        try:
            x, y = next(state["it"])
        except StopIteration:
            state["it"] = iter(loader)
            x, y = next(state["it"])
        x = x.to(device, non_blocking=fixed).to(dt)
        y = y.to(device, non_blocking=fixed)
        loss = F.cross_entropy(model(x).float(), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "input",
        step,
        f"DataLoader num_workers=0, batch {batch}, ~1 ms of "
        "Python/numpy transform per sample; 3-layer bf16 MLP",
        "input pipeline (DataLoader on the critical path, GPU mostly idle)",
        {
            "batch": batch,
            "transform_iters_per_sample": work,
            "num_workers": workers,
            "dtype": str(dt),
        },
        fix=f"num_workers={workers}, persistent workers, pin_memory, non_blocking copies"
        if fixed
        else None,
    )


# ---------------------------------------------------------------------------------- sync
def build_sync(
    device: str,
    batch: int = 4096,
    d: int = 4096,
    layers: int = 12,
    log_work: int = 2500,
    fixed: bool = False,
) -> Workload:
    """Sync-bound: a `.item()` after every layer feeds a Python metrics logger."""
    if device == "cpu":
        batch, d = 128, 512
    _seed()
    dt = _mm_dtype(device)
    blocks = nn.ModuleList([nn.Linear(d, d, bias=False) for _ in range(layers)]).to(
        device=device, dtype=dt
    )
    opt = torch.optim.SGD(blocks.parameters(), lr=1e-4)
    x = torch.randn(batch, d, device=device, dtype=dt)
    history: dict[str, list[float]] = {}
    cuda = device.startswith("cuda")
    host_buf = torch.empty(layers + 1, dtype=torch.float32, pin_memory=cuda)
    copied: dict[str, object] = {"event": None}

    def log(name: str, value: float) -> None:
        # a hand-rolled metrics logger: running mean + formatting, ~0.3 ms of Python
        h = history.setdefault(name, [])
        h.append(value)
        del h[:-100]
        _py_work(log_work)
        _ = f"{name} {value:.5f} mean {sum(h) / len(h):.5f}"

    def log_all(vals: list[float]) -> None:
        for i, v in enumerate(vals[:-1]):
            log(f"act{i}", v)
        log("loss", vals[-1])

    def step() -> None:
        h = x
        stats = []
        for i, lin in enumerate(blocks):
            h = F.gelu(lin(h))
            s = h.float().pow(2).mean()
            if fixed:
                stats.append(s.detach())  # keep it on the GPU, read it later
            else:
                log(f"act{i}", s.item())  # device->host copy + stream sync, then Python work
        loss = h.float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if not fixed:
            log("loss", loss.item())
            return
        # the fix: this step's work is queued; log the *previous* step's values, which were
        # copied to pinned memory asynchronously (waiting on that copy's event never waits on
        # the work just queued, unlike .item()/.tolist() on the in-order stream)
        if copied["event"] is not None:
            copied["event"].synchronize()
            log_all(host_buf.tolist())
        vals = torch.stack(stats + [loss.detach()]).float()
        if cuda:
            host_buf.copy_(vals, non_blocking=True)
            ev = torch.cuda.Event()
            ev.record()
            copied["event"] = ev
        else:
            log_all(vals.tolist())

    return Workload(
        "sync",
        step,
        f"{layers} bf16 Linear({d},{d}) layers, batch "
        f"{batch}; after every layer and after backward a "
        f".item() feeds a Python metrics logger (~0.3 ms) ({layers + 1} host syncs per step)",
        "host-device synchronization (each .item() blocks the CPU, then the GPU idles while Python "
        "logs; without the syncs that Python work would overlap GPU work)",
        {
            "batch": batch,
            "d": d,
            "layers": layers,
            "items_per_step": layers + 1,
            "log_python_iters": log_work,
            "dtype": str(dt),
        },
        fix="stats stay on the GPU, copied once per step "
        "to pinned memory (non_blocking + event); the "
        "previous step's values are logged while this step runs"
        if fixed
        else None,
    )



# ------------------------------------------------------------------------------ transfer
def build_transfer(
    device: str, mib: int = 256, batch: int = 256, d: int = 1024, fixed: bool = False
) -> Workload:
    """Transfer-bound: a pageable host tensor copied to the GPU synchronously every step."""
    if device == "cpu":
        mib = 8
    _seed()
    host = torch.randn(mib * 2**20 // 4)  # pageable (not pinned) host memory
    if fixed and device.startswith("cuda"):
        host = host.pin_memory()
    dt = _mm_dtype(device)
    model = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.Linear(d, d)).to(device=device, dtype=dt)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)

    def step() -> None:
        big = host.to(device, non_blocking=fixed)  # pageable: a synchronous host-to-device copy
        xb = big[: batch * d].view(batch, d).to(dt)
        loss = model(xb).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "transfer",
        step,
        f"{mib} MiB pageable host tensor copied to the "
        "GPU synchronously every step; 2-layer bf16 MLP",
        "host-to-device transfer (pageable, blocking; "
        "fix: pin + non_blocking, or keep data on GPU)",
        {"copy_mib": mib, "pinned": fixed, "non_blocking": fixed, "dtype": str(dt)},
        fix="host tensor pinned, copy non_blocking=True (same bytes every step)" if fixed else None,
    )


# ---------------------------------------------------------------------------------- host
def build_host(
    device: str, batch: int = 8192, d: int = 4096, work: int = 100_000, fixed: bool = False
) -> Workload:
    """Host-bound: Python/numpy bookkeeping after every step that launches nothing, never syncs."""
    if device == "cpu":
        batch, d = 256, 512
    _seed()
    dt = _mm_dtype(device)
    model = nn.Sequential(
        nn.Linear(d, d), nn.GELU(), nn.Linear(d, d), nn.GELU(), nn.Linear(d, d)
    ).to(device=device, dtype=dt)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, d, device=device, dtype=dt)
    book = {"hist": np.zeros(64), "ema": 0.0, "seen": 0, "step": 0}
    rng = np.random.default_rng(0)

    def step() -> None:
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        book["step"] += 1
        if fixed and book["step"] % 10:
            return  # the fix: do the bookkeeping every 10th step only
        # per-step bookkeeping on the host that launches nothing and never syncs
        vals = rng.standard_normal(4096)
        book["hist"] += np.histogram(vals, bins=64, range=(-4, 4))[0]
        acc = _py_work(work)
        book["ema"] = 0.99 * book["ema"] + 0.01 * (acc / 1_000_003)
        book["seen"] += 1

    return Workload(
        "host",
        step,
        f"3-layer bf16 MLP (batch {batch}, d={d}) then ~10 ms of Python/numpy bookkeeping per step "
        "that launches nothing and does not sync",
        "host-side Python between steps (GPU starved, no sync, no DataLoader)",
        {"batch": batch, "d": d, "python_iters": work, "dtype": str(dt)},
        fix="bookkeeping every 10th step instead of every step" if fixed else None,
    )
