"""TinyGPT as the committed fixture tests/data/real/tinygpt_before recorded it, as a script.

6 encoder layers, d=512, seq 256, batch 32, vocab 8192 on synthetic tokens; a DataLoader with
num_workers=0 and ~0.4 ms of CPU work per sample; pageable, blocking host-to-device copies;
fp32 weights and matmuls (no TF32: fp32 SIMT GEMMs). `--dtype bf16` is the precision fix alone
(bf16 autocast), `--fixed-loader` the loader fix alone (4 workers, pinned, non_blocking).
Prints "step N: X ms" for every step (its own clock); `--sync` synchronizes after each step,
as the fixture's unprofiled baseline was timed.

    python benchmarks/tinygpt/train_tinygpt.py --steps 40 [--dtype bf16] [--sync]
"""

from __future__ import annotations

import argparse
import time

import torch
from torch import nn

D, LAYERS, SEQ, BATCH, VOCAB = 512, 6, 256, 32, 8192
SAMPLE_CPU_S = 0.0004  # ~0.4 ms of Python work per sample, as the fixture's dataset did


class Tokens(torch.utils.data.Dataset):
    """Synthetic token windows whose __getitem__ burns ~0.4 ms of CPU, like a tokenizer."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> tuple[torch.Tensor, torch.Tensor]:
        end = time.perf_counter() + SAMPLE_CPU_S
        x = 0
        while time.perf_counter() < end:
            x += 1
        g = torch.Generator().manual_seed(i)
        t = torch.randint(0, VOCAB, (SEQ + 1,), generator=g)
        return t[:-1], t[1:]


class TinyGPT(nn.Module):
    """Embedding, 6 pre-norm encoder layers, a vocabulary head."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        layer = nn.TransformerEncoderLayer(D, 8, 4 * D, batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(self.emb(x)))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    p.add_argument("--fixed-loader", action="store_true")
    p.add_argument("--sync", action="store_true")
    a = p.parse_args()
    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False  # plain fp32 GEMMs, as recorded
    torch.backends.cudnn.allow_tf32 = False
    model = TinyGPT().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = torch.utils.data.DataLoader(
        Tokens(BATCH * (a.steps + 2)), batch_size=BATCH, shuffle=False,
        num_workers=4 if a.fixed_loader else 0, pin_memory=a.fixed_loader)
    last = time.perf_counter()
    for i, (x, y) in enumerate(loader):
        if i >= a.steps:
            break
        x = x.cuda(non_blocking=a.fixed_loader)
        y = y.cuda(non_blocking=a.fixed_loader)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.dtype == "bf16"):
            loss = nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if a.sync:
            torch.cuda.synchronize()
        now = time.perf_counter()
        print(f"step {i}: {(now - last) * 1e3:.3f} ms", flush=True)
        last = now
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
