"""The concrete code each finding recommends (kept as data so views can show it copyable)."""

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

LAUNCH = """\
model = torch.compile(model, mode="reduce-overhead")   # fuses ops and replays CUDA graphs
# or capture the static step with torch.cuda.graphs / make_graphed_callables;
# a larger batch also amortises each launch"""

HOST = """\
# move Python/CPU bookkeeping out of the step (or every N steps / a background thread)
if step % log_every == 0:
    log_metrics(...)
# do CPU tensor math on the GPU, or precompute it once outside the loop"""

PRECISION = """\
torch.backends.cuda.matmul.allow_tf32 = True   # TF32 Tensor Cores for fp32 matmuls
torch.backends.cudnn.allow_tf32 = True
with torch.autocast("cuda", dtype=torch.bfloat16):   # bf16 Tensor Cores
    loss = loss_fn(model(x), y)"""

MEMORY = """\
model = torch.compile(model)                        # fuses elementwise/norm chains
opt = torch.optim.AdamW(model.parameters(), fused=True)
# attention: F.scaled_dot_product_attention instead of softmax(q @ k.T) @ v"""

COMM = """\
model = DDP(model, bucket_cap_mb=100, gradient_as_bucket_view=True)  # fewer, larger all-reduces
with model.no_sync():          # gradient accumulation: all-reduce once every k micro-batches
    loss.backward()"""
