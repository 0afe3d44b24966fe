"""Make a large, realistic Kineto trace: GPT-2-small-like training, 40 profiled steps.

12 layers, d=768, 12 heads, seq 1024, vocab 50257, bf16 autocast, AdamW; profiled with
``schedule(wait=1, warmup=2, active=40)``, ``record_shapes``, ``profile_memory`` and
``with_stack`` (Python stack events), which makes a ~300 MB JSON (~900k events). Written
gzipped; used by ``bench_analyze_vs_hta.py`` to measure trace loading at scale.

    python benchmarks/make_big_trace.py --out .bigtrace/gpt2_40steps.pt.trace.json.gz
    python benchmarks/make_big_trace.py --out OUTDIR/t.json.gz --tiny   # quick CPU check
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import time

import torch
from torch import nn
from torch.nn import functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from capture_workloads import neutral_trace_name  # noqa: E402


class Block(nn.Module):
    def __init__(self, d: int, heads: int, naive: bool = False, dropout: float = 0.0):
        super().__init__()
        self.heads = heads
        self.naive = naive  # GPT-2's original attention: masked softmax + dropout, unfused
        self.drop = nn.Dropout(dropout)
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.out = nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        if self.naive:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.size(-1)))
            mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            att = self.drop(F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1))
            y = att @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.drop(self.proj(y.transpose(1, 2).reshape(b, t, d)))
        return x + self.drop(self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh")))


class GPT(nn.Module):
    def __init__(self, layers=12, d=768, heads=12, seq=1024, vocab=50257, naive=False,
                 dropout=0.0):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList([Block(d, heads, naive, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight  # tied, as in GPT-2

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--active", type=int, default=40)
    ap.add_argument("--level", type=int, default=6, help="gzip level")
    ap.add_argument("--naive-attention", action="store_true",
                    help="GPT-2's original unfused attention (masked softmax), as in HF eager")
    ap.add_argument("--dropout", type=float, default=0.0, help="GPT-2 used 0.1")
    ap.add_argument(
        "--tiny", action="store_true", help="2 layers, d=128, seq 128, 3 steps (CPU check)"
    )
    a = ap.parse_args(argv)

    torch.manual_seed(0)
    cuda = torch.cuda.is_available()
    dev = "cuda" if cuda else "cpu"
    cfg = dict(layers=12, d=768, heads=12, seq=1024, vocab=50257)
    if a.tiny:
        cfg = dict(layers=2, d=128, heads=4, seq=128, vocab=1000)
        a.active = min(a.active, 3)
        a.batch = 2
    model = GPT(**cfg, naive=a.naive_attention, dropout=a.dropout).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    g = torch.Generator().manual_seed(0)
    data = torch.randint(0, cfg["vocab"], (4, a.batch, cfg["seq"] + 1), generator=g).to(dev)
    it = [0]

    def step():
        batch = data[it[0] % data.shape[0]]
        it[0] += 1
        x, y = batch[:, :-1], batch[:, 1:]
        with torch.autocast(dev, dtype=torch.bfloat16):
            logits = model(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(3):
        step()
    if cuda:
        torch.cuda.synchronize()

    from torch.profiler import ProfilerActivity, profile, schedule

    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    raw = a.out + ".raw.json"
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    sched = dict(wait=1, warmup=2, active=a.active)
    t0 = time.perf_counter()
    with profile(
        activities=acts,
        schedule=schedule(**sched),
        record_shapes=True,
        profile_memory=True,
        with_stack=True,
        on_trace_ready=lambda p: p.export_chrome_trace(raw),
    ) as prof:
        for _ in range(sum(sched.values())):
            step()
            prof.step()
    t_prof = time.perf_counter() - t0
    raw_bytes = os.path.getsize(raw)

    t0 = time.perf_counter()
    with open(raw, "rb") as f:
        body = neutral_trace_name(f.read(), "gpt2_40steps.pt.trace.json")
    n_events = body.count(b'"ph": "') or body.count(b'"ph":"')
    with gzip.open(a.out + ".tmp", "wb", compresslevel=a.level) as gz:
        gz.write(body)
    os.replace(a.out + ".tmp", a.out)
    os.remove(raw)
    t_gz = time.perf_counter() - t0
    info = {
        "model": f"GPT-2-small-like {cfg}, batch {a.batch}, bf16 autocast, AdamW, "
                 f"{'naive' if a.naive_attention else 'fused SDPA'} attention, "
                 f"dropout {a.dropout}",
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "torch": torch.__version__,
        "schedule": sched,
        "options": {"record_shapes": True, "profile_memory": True, "with_stack": True},
        "json_bytes": raw_bytes,
        "events_approx": n_events,
        "gz_bytes": os.path.getsize(a.out),
        "profiled_loop_s": round(t_prof, 1),
        "gzip_s": round(t_gz, 1),
    }
    print(json.dumps(info))
    with open(a.out + ".info.json", "w") as f:
        json.dump(info, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
