"""A training script whose peak is activations, for `--try checkpoint,amp` on a GPU.

    python benchmarks/train_memory_layers.py [gpt2|layers] [STEPS]

`gpt2`: a Hugging Face GPT-2 (12 layers, d=768, fp32, AdamW, batch 8 × 1024 tokens; the try
calls its own `gradient_checkpointing_enable()`). `layers`: 16 pre-norm MLP blocks of d=1024 in
an `nn.ModuleList` (batch 64 × 512; the try wraps each block's forward in
`torch.utils.checkpoint`). Both seeded, so the tries' first losses compare with the run's.
"""

from __future__ import annotations

import sys

import torch
from torch import nn


class Block(nn.Module):
    """x + MLP(LayerNorm(x)): one repeated layer."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d)
        self.up = nn.Linear(d, 4 * d)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(self.act(self.up(self.norm(x))))


class Layers(nn.Module):
    """A stack of `Block`s and a head: the layers are called from one line in a loop."""

    def __init__(self, d: int = 1024, n: int = 16) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Block(d) for _ in range(n))
        self.head = nn.Linear(d, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main(which: str, steps: int) -> None:
    torch.manual_seed(0)
    if which == "gpt2":
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024)
        model: nn.Module = GPT2LMHeadModel(cfg).cuda().train()
        ids = torch.randint(0, cfg.vocab_size, (8, 1024), device="cuda")

        def loss_of() -> torch.Tensor:
            return model(ids, labels=ids).loss
    else:
        model = Layers().cuda()
        x = torch.randn(64, 512, 1024, device="cuda")
        y = torch.randn(64, 512, 1, device="cuda")

        def loss_of() -> torch.Tensor:
            return nn.functional.mse_loss(model(x), y)

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for _ in range(steps):
        loss_of().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "layers",
         int(sys.argv[2]) if len(sys.argv) > 2 else 30)
