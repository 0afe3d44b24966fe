"""DDP training workload for torchrun whose bottleneck is known: comm-bound, balanced or straggler.

Plain optimizer steps, so `jupyter gpuprof run` profiles it without code changes:

    python -m jupyter_gpuprof run -- \\
        torchrun --nproc-per-node 2 benchmarks/ddp_workload.py --variant comm
    torchrun --nproc-per-node 2 benchmarks/ddp_workload.py --variant balanced --tiny   # CPU, gloo

Variants (the expected verdict in brackets):
- ``comm`` [comm]: eight 8192x8192 Linear layers (537 M fp32 parameters, 2.1 GB of gradients
  all-reduced per step) on a batch of 8 rows in bf16: the backward is over at once, so the
  all-reduce has no compute to hide behind and both ranks reach it together (transfer, not
  waiting).
- ``balanced`` [not comm, not straggler]: a bf16 MLP stack (8 blocks 2048 -> 8192 -> 2048,
  268 M parameters) on 16384 rows: ~50 ms of Tensor-Core work per step; DDP overlaps the 1 GB
  all-reduce with the backward.
- ``straggler`` [straggler, rank 1, GPU work]: ``balanced`` with a 1.5x batch on rank 1.

``--tiny`` shrinks every size for a quick CPU smoke test (gloo backend when CUDA is absent).
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP

SIZES = {  # variant: (width, hidden, blocks, rows per rank)
    "comm": (8192, 0, 8, 8),
    "balanced": (2048, 8192, 8, 16384),
    "straggler": (2048, 8192, 8, 16384),
}
TINY = {"comm": (256, 0, 4, 4), "balanced": (64, 256, 2, 256), "straggler": (64, 256, 2, 256)}
STRAGGLER_BATCH = 1.5


def build_model(width: int, hidden: int, blocks: int) -> nn.Module:
    """Linear layers only (comm: width x width) or MLP blocks (width -> hidden -> width)."""
    if hidden == 0:
        return nn.Sequential(*(nn.Linear(width, width) for _ in range(blocks)))
    return nn.Sequential(*(nn.Sequential(nn.Linear(width, hidden), nn.GELU(),
                                         nn.Linear(hidden, width)) for _ in range(blocks)))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--variant", choices=sorted(SIZES), default="balanced")
    p.add_argument("--iters", type=int, default=40, help="training steps to run")
    p.add_argument("--tiny", action="store_true", help="tiny sizes (CPU smoke test)")
    args = p.parse_args()

    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', 0))}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    width, hidden, blocks, rows = (TINY if args.tiny else SIZES)[args.variant]
    if args.variant == "straggler" and rank == 1:
        rows = int(rows * STRAGGLER_BATCH)  # uneven data across ranks
    torch.manual_seed(0)
    with device:  # initialise on the GPU: 537 M parameters take seconds on the CPU
        net = build_model(width, hidden, blocks)
    model = DDP(net, device_ids=[device.index] if cuda else None,
                gradient_as_bucket_view=True)  # no gradient copies: keeps compute minimal
    # plain SGD: a cheap optimizer keeps the comm variant's step about the all-reduce
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    use_bf16 = cuda  # Tensor-Core matmuls: the comm variant's step is then about the all-reduce
    x = torch.randn(rows, width, device=device)
    t0 = time.perf_counter()
    for _ in range(args.iters):
        opt.zero_grad(set_to_none=True)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=use_bf16):
            loss = model(x).float().pow(2).mean()
        loss.backward()
        opt.step()
    if cuda:
        torch.cuda.synchronize()
    if rank == 0:
        n = sum(q.numel() for q in model.parameters())
        print(f"ddp_workload: variant={args.variant} world={world} params={n / 1e6:.0f}M "
              f"rows={rows} {1e3 * (time.perf_counter() - t0) / args.iters:.1f} ms/step "
              f"(incl. profiling)", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
