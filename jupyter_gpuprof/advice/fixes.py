"""The concrete code each finding recommends (kept as data so views can show it copyable)."""

from ..categories import Category

INPUT = """\
loader = DataLoader(dataset, batch_size=B, shuffle=True,
                    num_workers=min(8, os.cpu_count()), pin_memory=True,
                    persistent_workers=True, prefetch_factor=4)
x = x.to(device, non_blocking=True)   # overlaps the copy with compute
# heavy per-sample transforms: batch them on the GPU instead of in __getitem__"""

TRANSFER = """\
loader = DataLoader(dataset, ..., pin_memory=True)      # page-locked host buffers
x = x.to(device, non_blocking=True)                     # async copy, no host stall
# keep tensors on the GPU across steps; copy results back only every N steps"""

SYNC = """\
# before: loss.item() / tensor.cpu() / print(tensor) inside the step
running = running + loss.detach()          # accumulate on the GPU, no sync
if step % 100 == 0:
    print(running.item() / 100)            # one sync every 100 steps
    running.zero_()"""

#: the sync fix where the waits are copies to the GPU waiting for themselves
SYNC_UPLOAD = """\
# x.to(device) from pageable memory waits until the copy is done: pin it, copy asynchronously
x = x.pin_memory().to(device, non_blocking=True)   # page-locked host buffer, no host wait
# from a DataLoader: DataLoader(..., pin_memory=True), then .to(device, non_blocking=True)"""

LAUNCH = """\
# compiled: the short kernels fused, the step replayed from CUDA graphs (the predicted gain)
model = torch.compile(model, mode="reduce-overhead")
opt = torch.optim.AdamW(model.parameters(), fused=True)   # the optimizer in a few launches
# or by hand, graphs without fusion: capture the whole step (forward, backward, optimizer)
static_x.copy_(first_batch)                 # inputs live in fixed buffers
opt.zero_grad(set_to_none=False)            # grads stay allocated between replays
s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3): train_step(static_x)  # warm up on a side stream
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    train_step(static_x)
# each step: static_x.copy_(batch); g.replay()"""

#: the launch fix where compiling leaves the model eager past a graph break (an RNN): the whole
#: step captured by hand, as the word LM of PyTorch's examples measured it (docs/benchmarks.md)
LAUNCH_BY_HAND = """\
# torch.compile stops at the RNN (Dynamo cannot resume after one): capture the whole step
# (forward, backward, clipping, the update) by hand in one CUDA graph and replay it
total = torch.zeros((), device="cuda")       # the loss summed on the GPU, read every N steps
def step(x, y, state):                       # state: the hidden state carried from batch
    output, state = model(x, state)          # to batch (a model that takes none: drop it)
    loss = criterion(output, y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)   # as before, if you clip
    opt.step()                         # the update, as the loop makes it
    total.add_(loss.detach())
    return state
graph, side = None, torch.cuda.Stream()
for i, (x, y) in enumerate(batches):
    if graph is not None and x.shape == static_x.shape:
        static_x.copy_(x); static_y.copy_(y)   # the batch into the graph's fixed buffers
        graph.replay()
    elif i < 3 or graph is not None:           # warm-up batches and odd shapes run eagerly
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            model.zero_grad(set_to_none=graph is None)
            state = step(x, y, tuple(h.detach() for h in (static_state if graph else state)))
            if graph is not None:
                for kept, h in zip(static_state, state): kept.copy_(h.detach())
        torch.cuda.current_stream().wait_stream(side)
    else:                                      # captured once, on a real batch
        static_x, static_y = x.clone(), y.clone()
        static_state = tuple(h.detach().clone() for h in state)
        model.zero_grad(set_to_none=True)      # gradients then live in the graph's pool
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for kept, h in zip(static_state, step(static_x, static_y, static_state)):
                kept.copy_(h.detach())         # the next batch starts from this state
        graph.replay()                         # capturing ran nothing: run this batch"""

HOST = """\
# move Python/CPU bookkeeping out of the step (or every N steps / a background thread)
if step % log_every == 0:
    log_metrics(...)
# do CPU tensor math on the GPU, or precompute it once outside the loop"""

#: added to the host fix where checkpoints or full GC passes stall steps now and then
HOST_STALLS = """
# checkpoints off the step: write them from a thread (or torch.distributed.checkpoint.async_save)
state = {k: v.detach().to("cpu", non_blocking=True) for k, v in model.state_dict().items()}
threading.Thread(target=torch.save, args=(state, path)).start()
# full garbage-collector passes: gc.freeze() once the model and data are built"""

PRECISION = """\
torch.backends.cuda.matmul.allow_tf32 = True   # TF32 Tensor Cores for fp32 matmuls
torch.backends.cudnn.allow_tf32 = True
with torch.autocast("cuda", dtype=torch.bfloat16):   # bf16 Tensor Cores
    loss = loss_fn(model(x), y)"""

#: the host paces the step once the matmuls run on Tensor Cores: TF32 launches nothing more;
#: bf16 autocast would add a cast before each matmul, issued by the host that sets the pace
#: (the lecture GPT of karpathy/ng-video-lecture on an H100: TF32 −10 %, autocast +17 %)
TF32 = """\
torch.backends.cuda.matmul.allow_tf32 = True   # TF32 Tensor Cores for fp32 matmuls
torch.backends.cudnn.allow_tf32 = True         # (not autocast: its casts add host work)"""

#: TF32 already on: what is left is bf16 autocast (twice the TF32 Tensor-Core rate on Ampere
#: and Hopper, half the bytes for the activations around the matmuls)
AUTOCAST = """\
with torch.autocast("cuda", dtype=torch.bfloat16):   # bf16 Tensor Cores, bf16 activations
    loss = loss_fn(model(x), y)                      # backward() outside, as before"""

MEMORY = """\
model = torch.compile(model)                        # fuses elementwise/norm chains
opt = torch.optim.AdamW(model.parameters(), fused=True)
# attention: F.scaled_dot_product_attention instead of softmax(q @ k.T) @ v"""

COMM = """\
model = DDP(model, bucket_cap_mb=100, gradient_as_bucket_view=True)  # fewer, larger all-reduces
with model.no_sync():          # gradient accumulation: all-reduce once every k micro-batches
    loss.backward()"""

# Framework terms: the same fixes as a Hugging Face Trainer or Lightning user writes them.
HF_PRECISION = """\
args = TrainingArguments(..., bf16=True, tf32=True)   # bf16 autocast + TF32 matmuls"""

HF_INPUT = """\
args = TrainingArguments(..., dataloader_num_workers=8, dataloader_pin_memory=True,
                         dataloader_persistent_workers=True, dataloader_prefetch_factor=4)
# tokenize once, before training: dataset = dataset.map(tokenize, batched=True)"""

HF_TRANSFER = """\
args = TrainingArguments(..., dataloader_pin_memory=True)   # page-locked, async copies"""

HF_COMPILE = """\
args = TrainingArguments(..., torch_compile=True, optim="adamw_torch_fused")"""

LIGHTNING_PRECISION = """\
torch.set_float32_matmul_precision("high")          # TF32 for what stays fp32
trainer = L.Trainer(..., precision="bf16-mixed")     # bf16 autocast"""

LIGHTNING_INPUT = """\
loader = DataLoader(dataset, batch_size=B, num_workers=8, pin_memory=True,
                    persistent_workers=True, prefetch_factor=4)
trainer.fit(model, loader)
# tokenize once, before training, not in __getitem__"""

LIGHTNING_TRANSFER = """\
loader = DataLoader(dataset, ..., pin_memory=True)   # Lightning then copies non_blocking"""

LIGHTNING_COMPILE = """\
trainer.fit(torch.compile(model), loader)   # fuses kernels, fewer launches"""

#: each category's fix as the one-trace rules paste it (tests/test_categories.py enumerates it)
FIX_OF = {Category.INPUT: INPUT, Category.TRANSFER: TRANSFER, Category.SYNC: SYNC,
          Category.LAUNCH: LAUNCH, Category.HOST: HOST, Category.PRECISION: PRECISION,
          Category.MEMORY: MEMORY, Category.COMM: COMM}

#: the TF32-only precision fix (`TF32`) in a Trainer's terms
HF_TF32 = """\
args = TrainingArguments(..., tf32=True)   # TF32 matmuls (not bf16=True: its casts
                                           # add work for the host that sets the pace)"""

LIGHTNING_TF32 = """\
torch.set_float32_matmul_precision("high")   # TF32 (not precision="bf16-mixed": its casts
trainer = L.Trainer(...)                     # add work for the host that sets the pace)"""

#: (framework, verdict category) -> the fix in that framework's terms
FRAMEWORK_FIXES = {
    ("transformers", "precision-tf32"): HF_TF32,
    ("lightning", "precision-tf32"): LIGHTNING_TF32,
    ("transformers", "precision"): HF_PRECISION,
    ("transformers", "input"): HF_INPUT,
    ("transformers", "transfer"): HF_TRANSFER,
    ("transformers", "launch"): HF_COMPILE,
    ("transformers", "memory"): HF_COMPILE,
    ("lightning", "precision"): LIGHTNING_PRECISION,
    ("lightning", "input"): LIGHTNING_INPUT,
    ("lightning", "transfer"): LIGHTNING_TRANSFER,
    ("lightning", "launch"): LIGHTNING_COMPILE,
    ("lightning", "memory"): LIGHTNING_COMPILE,
}
