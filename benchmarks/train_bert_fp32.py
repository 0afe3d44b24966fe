"""A plain training script for `jupyter gpuprof run --try`'s GPU proof (try_script_gpu.sh).

Hugging Face BERT (6 layers, random weights, nothing downloaded), masked-LM steps in fp32 with
TF32 off, as an older default trains: the report's precision finding predicts what TF32 and
bf16 autocast save, and `run --try` re-runs this script once per fix to measure them.

    python benchmarks/train_bert_fp32.py [STEPS]
"""

from __future__ import annotations

import sys

import torch
from transformers import BertConfig, BertForMaskedLM


def main(steps: int) -> None:
    """Build the model and train `steps` steps on fixed random tokens."""
    torch.backends.cuda.matmul.allow_tf32 = False  # full fp32 GEMMs
    torch.manual_seed(0)
    cfg = BertConfig(num_hidden_layers=6, hidden_size=768, num_attention_heads=12,
                     intermediate_size=3072, vocab_size=8192, max_position_embeddings=512)
    model = BertForMaskedLM(cfg).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, cfg.vocab_size, (16, 256), device="cuda")
    for step in range(steps):
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step % 20 == 0:
            print(f"step {step} loss {loss.item():.4f}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 80)
