"""A tiny GPT-2 trained four ways (HF Trainer, Lightning, Accelerate, gradient accumulation).

Random weights and random token ids: nothing comes from a hub. SETUP runs in an IPython
shell (the magic tests) and in scripts (the CLI test); each `train_*` trains `n` optimizer
steps and returns the seconds it took.
"""

SETUP = r'''
import os, time, warnings, logging
os.environ["HF_HUB_OFFLINE"] = "1"
warnings.filterwarnings("ignore")
logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
import torch
torch.set_num_threads(1)  # a shared CI machine: one thread times steadily
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
from transformers.utils import logging as hf_logging
hf_logging.set_verbosity_error()
torch.manual_seed(0)
CFG = GPT2Config(n_layer=2, n_embd=32, n_head=2, vocab_size=256, n_positions=32)
IDS = torch.randint(0, 256, (2048, 32))

class TokenDS(torch.utils.data.Dataset):
    def __len__(self):
        return len(IDS)
    def __getitem__(self, i):
        return {"input_ids": IDS[i], "labels": IDS[i]}

def hf_trainer(n, out, **kw):
    args = TrainingArguments(out, max_steps=n, per_device_train_batch_size=8, report_to=[],
                             logging_strategy="no", save_strategy="no", disable_tqdm=True,
                             use_cpu=True, **kw)
    return Trainer(model=GPT2LMHeadModel(CFG), args=args, train_dataset=TokenDS())

import lightning as L

class TinyLM(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.lm = GPT2LMHeadModel(CFG)
    def training_step(self, batch, i):
        return self.lm(input_ids=batch["input_ids"], labels=batch["labels"]).loss
    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)

def lightning_trainer(n, **kw):
    return L.Trainer(max_steps=n, accelerator="cpu", logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, enable_model_summary=False, **kw)

def lightning_loader():
    return torch.utils.data.DataLoader(TokenDS(), batch_size=8)

def train_accelerate(n, accumulate=1):
    from accelerate import Accelerator
    acc = Accelerator(cpu=True, gradient_accumulation_steps=accumulate)
    model = GPT2LMHeadModel(CFG)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loader = torch.utils.data.DataLoader(TokenDS(), batch_size=8)
    model, opt, loader = acc.prepare(model, opt, loader)
    t = time.perf_counter()
    done = 0
    for batch in loader:
        with acc.accumulate(model):
            acc.backward(model(**batch).loss)
            opt.step()
            opt.zero_grad()
        done += acc.sync_gradients
        if done == n:
            break
    return time.perf_counter() - t

def train_accumulating(n, micro=4):
    model = GPT2LMHeadModel(CFG)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    it = iter(torch.utils.data.DataLoader(TokenDS(), batch_size=8))
    t = time.perf_counter()
    for _ in range(n):
        for _ in range(micro):
            (model(**next(it)).loss / micro).backward()
        opt.step()
        opt.zero_grad()
    return time.perf_counter() - t
'''
