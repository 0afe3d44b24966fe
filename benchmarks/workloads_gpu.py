"""Workloads whose bottleneck is the GPU's kernels: launch overhead of tiny kernels, fp32 GEMMs
without Tensor Cores, Tensor-Core compute, and unfused memory-bound elementwise chains.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F
from workload_base import Workload, _seed, _set_fp32_matmul


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
    """Launch-bound: thousands of tiny fp32 kernels, the CPU launching them is the limit."""
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
    """A seeded stack of square bias-free Linear layers, its optimizer and input batch."""
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
    """Precision-bound: fp32 GEMMs with TF32 off run on SIMT units, not Tensor Cores."""
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
    """Compute-bound: the same GEMMs in bf16 on Tensor Cores (nothing to fix)."""
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
    """Memory-bound: LayerNorm and unfused elementwise chains over a large fp32 tensor."""
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

