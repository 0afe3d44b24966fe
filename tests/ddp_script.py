"""A tiny 2-rank gloo DDP training script the torchrun tests run under `jupyter gpuprof run`."""

DDP = """
import os
import sys
import torch
import torch.distributed as dist
from torch import nn
dist.init_process_group("gloo")
print(f"rank {dist.get_rank()} under_ncu={os.environ.get('UNDER_FAKE_NCU', '0')}", flush=True)
model = nn.parallel.DistributedDataParallel(nn.Linear(16, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
for i in range(14):
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
# ranks that profile and ranks that do not leave the loop at different times: without this
# barrier gloo's teardown sometimes aborts one of them ("terminate called", torch 2.13, CPU)
dist.barrier()
dist.destroy_process_group()
# torch's CPU (gloo) build can abort the interpreter's own teardown when ranks leave at
# different times ("terminate called without an active exception", also for a rank that ran
# untouched): the job is done and its files are written, so leave without that teardown
sys.stdout.flush()
os._exit(0)
"""
