"""One small GPT-2, trained by the HF Trainer and by Lightning, as the notebook profiles them.

Offline by construction: random weights (GPT2Config), random token ids, and for the input-bound
variant raw text made up here and tokenized per sample, in the main process, by a pure-Python
greedy longest-match tokenizer over a vocabulary built from that text (the CPU cost a
`__getitem__` that tokenizes really has). Used by notebooks/frameworks_gpu.ipynb
(benchmarks/make_frameworks_notebook.py); `python benchmarks/frameworks_gpu.py --tiny` is a CPU
smoke run of every builder.
"""

from __future__ import annotations

import argparse
import os
import random
import time
import unicodedata
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

SEQ = 512
BATCH = 16
#: text per sample: about 100 ms of tokenizing per batch of 16 on one host core
CHARS_PER_SAMPLE = 40000
#: GPUPROF_FW_TINY=1: every builder makes the CPU-sized model (a smoke run of the notebook)
TINY = os.environ.get("GPUPROF_FW_TINY") == "1"
WORDS = ["gpu", "kernel", "tensor", "stream", "profile", "matmul", "step", "loss", "batch",
         "cache", "warp", "memory", "launch", "graph", "token", "layer", "model", "train"]


def config(tiny: bool = TINY) -> Any:
    """The model: GPT-2 with 6 layers of width 768 (a few seconds per 60 steps on an H200)."""
    from transformers import GPT2Config

    if tiny:
        return GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=512, n_positions=64,
                          bos_token_id=0, eos_token_id=0)
    return GPT2Config(n_layer=6, n_embd=768, n_head=12, vocab_size=8192, n_positions=SEQ,
                      bos_token_id=0, eos_token_id=0)


class TokenIds(torch.utils.data.Dataset):
    """Pre-tokenized samples: random ids, so the data pipeline costs nothing."""

    def __init__(self, vocab: int, seq: int, n: int = 4096) -> None:
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class CharTokenizer:
    """Greedy longest-match over a vocabulary of text pieces, in Python, one sample at a time."""

    def __init__(self, text: str, vocab: int, longest: int = 6) -> None:
        counts: dict[str, int] = {}
        for n in range(2, longest + 1):
            for i in range(0, len(text) - n, 3):
                piece = text[i:i + n]
                counts[piece] = counts.get(piece, 0) + 1
        chars = sorted(set(text))
        best = sorted(counts, key=counts.__getitem__, reverse=True)[: vocab - len(chars) - 1]
        self.ids = {p: i + 1 for i, p in enumerate(chars + best)}
        self.longest = longest

    def encode(self, text: str, seq: int) -> list[int]:
        """Token ids of text, cut or padded (id 0) to seq (the whole text is encoded first)."""
        out: list[int] = []
        i, ids = 0, self.ids
        text = unicodedata.normalize("NFKC", text.lower())
        while i < len(text):
            for n in range(self.longest, 0, -1):
                tid = ids.get(text[i:i + n])
                if tid is not None:
                    out.append(tid)
                    i += n
                    break
            else:
                i += 1
        out = out[:seq]
        return out + [0] * (seq - len(out))


class RawText(torch.utils.data.Dataset):
    """Raw text made and tokenized in __getitem__ (the main process when num_workers=0)."""

    def __init__(self, vocab: int, seq: int, n: int = 4096, chars: int = CHARS_PER_SAMPLE) -> None:
        self.n, self.chars, self.seq = n, chars, seq
        self.tok = CharTokenizer(" ".join(self.text(i) for i in range(8)), vocab)

    def text(self, i: int) -> str:
        """Sample i's text (a document as read from disk would be)."""
        rnd = random.Random(i)
        return " ".join(rnd.choice(WORDS) + str(rnd.randint(0, 99))
                        for _ in range(self.chars // 7))

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        ids = torch.tensor(self.tok.encode(self.text(i), self.seq))
        return {"input_ids": ids, "labels": ids}


def dataset(kind: str, tiny: bool = TINY) -> torch.utils.data.Dataset:
    """`ids` (free data) or `text` (tokenized per sample)."""
    cfg = config(tiny)
    seq = cfg.n_positions
    return TokenIds(cfg.vocab_size, seq) if kind == "ids" else RawText(cfg.vocab_size, seq)


def hf_trainer(steps: int, data: str = "ids", tiny: bool = TINY, **args: Any) -> Any:
    """A transformers Trainer over the model; `args` go to TrainingArguments (bf16=True…)."""
    from accelerate.state import AcceleratorState
    from transformers import GPT2LMHeadModel, Trainer, TrainingArguments

    # Accelerate keeps its mixed-precision state per process: a second Trainer with bf16=True
    # would silently reuse the first one's fp32 state without this reset.
    AcceleratorState._reset_state(True)
    torch.manual_seed(0)
    targs = TrainingArguments(
        "/tmp/gpuprof-hf", max_steps=steps, per_device_train_batch_size=BATCH if not tiny else 4,
        report_to=[], logging_strategy="no", save_strategy="no", disable_tqdm=True,
        use_cpu=tiny, **args)
    return Trainer(model=GPT2LMHeadModel(config(tiny)), args=targs,
                   train_dataset=dataset(data, tiny))


def lightning_parts(steps: int, data: str = "ids", tiny: bool = TINY,
                    num_workers: int = 0, **trainer_args: Any) -> tuple[Any, Any, Any, Any]:
    """(trainer, module, loader, timer): `trainer.fit(module, loader)` trains; timer times it."""
    import lightning as L
    from lightning.pytorch.callbacks import Timer
    from transformers import GPT2LMHeadModel

    class TinyLM(L.LightningModule):
        """The same GPT-2 as a LightningModule."""

        def __init__(self) -> None:
            super().__init__()
            self.lm = GPT2LMHeadModel(config(tiny))

        def training_step(self, batch: dict[str, torch.Tensor], i: int) -> torch.Tensor:
            return self.lm(input_ids=batch["input_ids"], labels=batch["labels"]).loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.AdamW(self.parameters(), lr=1e-4)

    torch.manual_seed(0)
    timer = Timer()
    trainer = L.Trainer(max_steps=steps, accelerator="cpu" if tiny else "gpu", devices=1,
                        logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False, callbacks=[timer], **trainer_args)
    loader = torch.utils.data.DataLoader(
        dataset(data, tiny), batch_size=BATCH if not tiny else 4, shuffle=True,
        num_workers=num_workers, pin_memory=not tiny, persistent_workers=num_workers > 0)
    return trainer, TinyLM(), loader, timer


def hf_step_ms(metrics: dict[str, float], tiny: bool = TINY) -> float:
    """The Trainer's own logged throughput as ms per optimizer step."""
    return 1e3 * (BATCH if not tiny else 4) / metrics["train_samples_per_second"]


def lightning_step_ms(timer: Any, steps: int) -> float:
    """Lightning's Timer callback (train stage) as ms per optimizer step, start-up included."""
    return 1e3 * timer.time_elapsed("train") / steps


def median_step_ms(report: Any) -> float:
    """The report's real step time (unprofiled baseline median)."""
    return float(report.to_json()["steps"]["median_ms"])


def _smoke() -> None:
    t = time.perf_counter()
    out = hf_trainer(4, tiny=True).train()
    print("hf ids", round(hf_step_ms(out.metrics, tiny=True), 2), "ms/step")
    out = hf_trainer(4, data="text", tiny=True).train()
    print("hf text", round(hf_step_ms(out.metrics, tiny=True), 2), "ms/step")
    trainer, module, loader, timer = lightning_parts(4, data="text", tiny=True)
    trainer.fit(module, loader)
    print("lightning text", round(lightning_step_ms(timer, 4), 2), "ms/step")
    ds = dataset("text", tiny=False)
    t1 = time.perf_counter()
    for i in range(BATCH):
        ds[i]
    print(f"tokenizing one batch of {BATCH}: {1e3 * (time.perf_counter() - t1):.0f} ms; "
          f"smoke run {time.perf_counter() - t:.1f} s")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="CPU smoke run of every builder")
    if parser.parse_args().tiny:
        _smoke()
