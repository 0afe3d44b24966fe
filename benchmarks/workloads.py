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
from collections.abc import Callable
from dataclasses import dataclass, field

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
    # for a variant built with fixed=True: what was changed (the intended fix)
    fix: str | None = None


def _seed(seed: int = 0) -> None:
    torch.manual_seed(seed)
    np.random.seed(seed)


def _py_work(n: int) -> int:
    """Deterministic pure-Python busy work (~0.1-0.15 us per iteration on a current x86 core)."""
    acc = 0
    for k in range(n):
        acc = (acc * 31 + k) % 1_000_003
    return acc


def _mm_dtype(device: str) -> torch.dtype:
    # bf16 on the GPU; on CPU too (slow but it runs) so the CPU dry run builds the same graph
    return torch.bfloat16


def _set_fp32_matmul(ieee: bool) -> None:
    """Full fp32 GEMMs (SIMT sgemm, ``allow_tf32=False``) or TF32, on old and new torch."""
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


def build_input(device: str, batch: int = 16, work: int = 6000, fixed: bool = False) -> Workload:
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


# -------------------------------------------------------------------------------- launch
def graph_whole_step(step):
    """`step` captured in one CUDA graph (warmed up on a side stream first): its replay."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def build_launch(
    device: str, batch: int = 8, d: int = 64, blocks: int = 48, fixed: bool = False
) -> Workload:
    if fixed and not device.startswith("cuda"):
        raise NotImplementedError("the launch fix (CUDA graphs) needs a GPU")
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
        opt.zero_grad(set_to_none=False)  # grads stay allocated: a graph replays into them

    if fixed:  # the report's fix: the whole step captured once, replayed as one launch
        step = graph_whole_step(step)

    return Workload(
        "launch",
        step,
        f"{2 * blocks} tiny ops in sequence (Linear({d},{d}) + "
        f"LayerNorm({d}) x {blocks}) on a batch of {batch}, fp32",
        "kernel-launch overhead (thousands of ~us kernels, CPU-bound launching)",
        {"batch": batch, "d": d, "blocks": blocks, "dtype": "torch.float32"},
        fix="whole step (forward, backward, optimizer) captured in one CUDA graph"
        if fixed
        else None,
    )


# ------------------------------------------------------------------ precision / compute
def _gemm_stack(device: str, dt: torch.dtype, batch: int, d: int, layers: int):
    _seed()
    model = nn.Sequential(*[nn.Linear(d, d, bias=False) for _ in range(layers)]).to(
        device=device, dtype=dt
    )
    opt = torch.optim.SGD(model.parameters(), lr=1e-5)
    x = torch.randn(batch, d, device=device, dtype=dt)
    return model, opt, x


def build_precision(
    device: str, batch: int = 4096, d: int = 8192, layers: int = 4, fixed: bool = False
) -> Workload:
    if device == "cpu":  # keep the CPU dry run quick
        batch, d = 256, 512
    model, opt, x = _gemm_stack(device, torch.float32, batch, d, layers)

    def step() -> None:
        _set_fp32_matmul(ieee=not fixed)  # TF32 off: full fp32 SIMT sgemm kernels
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "precision",
        step,
        f"{layers} fp32 Linear({d},{d}) layers, batch {batch}, TF32 disabled (allow_tf32=False)",
        "fp32 GEMMs without Tensor Cores (fix: TF32/bf16 autocast)",
        {"batch": batch, "d": d, "layers": layers, "dtype": "torch.float32", "tf32": fixed},
        fix="TF32 allowed (torch.backends.cuda.matmul.allow_tf32=True)" if fixed else None,
    )


def build_compute(
    device: str, batch: int = 4096, d: int = 8192, layers: int = 4, fixed: bool = False
) -> Workload:
    if fixed:
        raise NotImplementedError("compute-bound bf16 GEMMs: no fix to measure")
    if device == "cpu":
        batch, d = 256, 512
    model, opt, x = _gemm_stack(device, torch.bfloat16, batch, d, layers)

    def step() -> None:
        loss = model(x).float().square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return Workload(
        "compute",
        step,
        f"the same {layers} Linear({d},{d}) layers, batch {batch}, in bf16 (Tensor Cores)",
        "GPU compute (Tensor-Core GEMMs; nothing to fix but the math)",
        {"batch": batch, "d": d, "layers": layers, "dtype": "torch.bfloat16"},
    )


# -------------------------------------------------------------------------------- memory
def build_memory(
    device: str, batch: int = 32, t: int = 1024, d: int = 1024, depth: int = 6, fixed: bool = False
) -> Workload:
    if device == "cpu":
        batch = 2
    _seed()
    ln = nn.ModuleList([nn.LayerNorm(d) for _ in range(depth)]).to(device)
    scale = nn.Parameter(torch.ones(d, device=device))
    opt = torch.optim.SGD(list(ln.parameters()) + [scale], lr=1e-3)
    x = torch.randn(batch, t, d, device=device)

    def forward(h: torch.Tensor) -> torch.Tensor:
        for norm in ln:
            # unfused elementwise chain: each op reads and writes the whole tensor
            r = h
            h = norm(h)
            h = h * scale
            h = F.gelu(h)
            h = h * 0.5 + 0.25
            h = torch.sigmoid(h) * torch.tanh(h)
            h = h + r
        return h.square().mean()

    if fixed:
        forward = torch.compile(forward)  # Inductor fuses the chain (fwd and bwd)

    def step() -> None:
        loss = forward(x)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    numel = batch * t * d
    return Workload(
        "memory",
        step,
        f"{depth} x (LayerNorm + 8 unfused elementwise ops) on a {batch}x{t}x{d} fp32 tensor "
        f"({numel * 4 / 2**20:.0f} MiB each)",
        "memory bandwidth (elementwise/normalization kernels, no GEMMs)",
        {"shape": [batch, t, d], "depth": depth, "dtype": "torch.float32"},
        fix="torch.compile (Inductor fusion of the elementwise chain)" if fixed else None,
    )


# ------------------------------------------------------------------------------ transfer
def build_transfer(
    device: str, mib: int = 256, batch: int = 256, d: int = 1024, fixed: bool = False
) -> Workload:
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


def build(name: str, device: str, shrink: bool = False, fixed: bool = False) -> Workload:
    """Build a workload; ``fixed=True`` applies its intended fix (NotImplementedError if none)."""
    kw = dict(SHRINK.get(name, {})) if shrink else {}
    if fixed:
        kw["fixed"] = True
    return BUILDERS[name](device, **kw)


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
