"""Named thresholds and assumed speed-ups behind every finding (one place to tune them)."""

#: a finding must be worth at least this share of the real step to be reported
MIN_FINDING_GAIN_PCT = 2.0
#: the verdict names a bottleneck only when fixing it is worth at least this much
MIN_VERDICT_GAIN_PCT = 5.0
#: GPU-side savings shorten the step fully once the GPU is busy this share of the real step;
#: below it, the host is on the critical path and they count proportionally
GPU_BOUND_BUSY_FRAC = 0.6
#: fp32 GEMMs without Tensor Cores -> TF32/bf16: conservative speed-up (H100-class peaks differ
#: by 7-15x; cuBLAS reaches 4x and more on realistic shapes)
PRECISION_SPEEDUP = 4.0
#: a step predicted this much longer than the GPU work left after a fix is paced by the host
HOST_PACED_MARGIN = 1.25
#: share of memory-bound kernel time that fusion (torch.compile, fused optimizers) removes
FUSION_SAVING = 0.4
#: memory-bound kernels must carry this share of GPU kernel time before fusion is advised
MEMORY_BOUND_MIN_SHARE = 0.4
#: share of launch-bound idle that CUDA graphs / torch.compile(mode="reduce-overhead") remove
LAUNCH_SAVING = 0.8
#: share of host-bound idle that moving bookkeeping off the step removes
HOST_SAVING = 0.7
#: share of exposed copy time that pinned memory + non_blocking + prefetch removes
TRANSFER_SAVING = 0.8
#: share of exposed communication that bucketing / overlap tuning removes
COMM_SAVING = 0.5
#: data-pipeline share of the host timeline worth a finding even when it is hidden
INPUT_HOST_SHARE_PCT = 5.0
#: 'compute' verdict: GPU busy at least this share of the real step ...
COMPUTE_BUSY_FRAC = 0.8
#: ... with at least this share of matmul time on Tensor Cores
COMPUTE_TC_SHARE = 0.8
#: a mostly idle GPU with no verdict names its largest idle cause when that cause holds this
#: share of the step (% of the real step); below it, the idle time is spread over small causes
IDLE_CAUSE_NAMED_PCT = 20.0
#: confidence: the top finding must beat the runner-up by this factor to be 'high'
CONFIDENT_MARGIN = 1.5
#: confidence: profiled host steps this much slower than real ones weaken host-side verdicts
INFLATION_WARN = 1.5
#: confidence: fewer profiled steps than this is too few to judge (two steps of doubt)
MIN_CONFIDENT_STEPS = 3
#: a rank is a straggler when it needs at least this share of the step more than the others
STRAGGLER_MIN_PCT = 5.0
#: ... and the other ranks really wait for it: their collective wait covers this share of it
STRAGGLER_WAIT_SHARE = 0.5
#: rebalancing work across ranks moves it rather than removing it: about half the excess goes
STRAGGLER_GPU_WORK_SAVING = 0.5
#: a late host (data loading, host work) on one rank is pure loss: fixing it removes it all
STRAGGLER_HOST_SAVING = 1.0
#: host delay counts as data loading when the data pipeline explains this share of it
INPUT_EXPLAINS_SHARE = 0.5
# Nsight Compute kernel verdicts (`ncu/rules.py`)
#: speed-of-light % above which a unit is the bottleneck (Nsight's SOLBottleneck uses 60 %)
NCU_BOUND_PCT = 60.0
#: a matmul kernel using less Tensor-Core pipe than this is not on Tensor Cores
NCU_TENSOR_IDLE_PCT = 5.0
#: tensor pipe busier than this counts as compute-bound even when SOL % reads lower
NCU_TENSOR_BUSY_PCT = 50.0
#: theoretical occupancy below this, with neither unit busy, is the limiter worth fixing
NCU_LOW_OCCUPANCY_PCT = 50.0
#: achieved occupancy this many points under theoretical points at imbalance or tail effects
NCU_OCCUPANCY_GAP_PTS = 20.0
# What-if step model (`advice/whatif.py`): costs and efficiencies it assumes
#: a stretch of host work between two calls at least this long (profiled) is bookkeeping
#: that can leave the step; shorter ones are the Python glue of dispatching ops
HOST_WORK_MIN_US = 200.0
#: GPU-side spacing between kernels replayed from a CUDA graph (H200: a whole-step graph of
#: 729 launches ran in 1.16 ms against 0.98 ms of kernel time, 0.25 µs a node)
GRAPH_NODE_US = 0.3
#: host cost of one graph launch (a graph is cut at every sync)
GRAPH_LAUNCH_US = 15.0
#: host cost of one call into a model compiled with mode="reduce-overhead", forward and its
#: backward together, beyond the kernels it replays: Dynamo's guards, AOTAutograd's wrappers,
#: the CUDA-graph tree's checks (H200, torch 2.11: an MLP's step fitted over 8/16/32 layers
#: leaves 0.75 ms at zero layers; benchmarks/compiled_call_overhead.py)
COMPILED_GRAPHS_CALL_US = 750.0
#: host cost of an asynchronous copy call from pinned memory
ASYNC_COPY_CALL_US = 5.0
#: share of the Tensor-Core peak cuBLAS reaches on training shapes when the trace has no
#: Tensor-Core GEMM of its own to calibrate with
TENSOR_CORE_EFFICIENCY = 0.6
#: TF32 matmul and fp32 attention time per step (ms, at least) that makes bf16 autocast worth a
#: finding where no matmul misses the Tensor Cores
TF32_MATMUL_MIN_MS = 1.0
#: fp32 attention without Tensor Cores (SDPA's memory-efficient or math kernels) against the
#: bf16 flash kernels autocast sends it to: below the Tensor-Core/SIMT peak ratio (15× on the
#: H200) since attention also moves memory; nanoGPT (GPT-2 124M) on the H200 measured 9.6×
#: (76.6 → 8.0 ms a step)
FLASH_ATTENTION_SPEEDUP = 8.0
#: share of the fp32 (SIMT) peak an fp32 GEMM reaches, to count FLOPs when shapes are missing
SIMT_EFFICIENCY = 0.7
#: a read-back smaller than this is a sync (`.item()`), larger ones are transfers
READBACK_MAX_BYTES = 64 * 1024
#: a memory-bound kernel shorter than this is bound by launch latency, not bandwidth: fusing
#: such kernels is the launch fix's saving (compiled into the graph), not the memory fix's
MEMORY_MIN_KERNEL_US = 10.0
#: the most kernels one fused kernel replaces (Inductor's `max_fusion_size` default)
FUSION_MAX_KERNELS = 64
MEMORY_KINDS = ("elementwise", "norm", "softmax", "reduction", "other")

#: below both, a trace holds too little GPU work to judge (no step-sized advice)
MIN_GPU_ACTIVITIES = 20
MIN_GPU_WORK_MS = 1.0

#: calls per step of both `aten::item` and a norm op that mark per-parameter norm logging
PER_PARAM_MIN_CALLS = 8

#: a fix priced together with the fix it needs first (a CUDA graph needs the syncs gone) is
#: the verdict only if it adds at least this many points of the step on top of that fix
PREREQUISITE_MARGIN_PCT = 5.0
#: the share of the syncs' idle that copies to the GPU must hold for the sync fix to be theirs
UPLOAD_WAIT_SHARE = 0.5

#: share of a stall's excess its fix removes (persistent DataLoader workers still make the new
#: epoch's first batch; an asynchronous checkpoint still copies the state off the GPU)
STALL_SAVING = 0.9
#: stalls nothing recorded explains, as a share of the wall time, that the verdict mentions
UNEXPLAINED_STALL_PCT = 20.0

#: the calibration record corrects a fix's predicted gain only after this many significant
#: tries of that fix on the same GPU (fewer: the prediction is shown as it is)
CALIBRATION_MIN_TRIES = 3
#: the correction moves a prediction by at most this many points of the step, and never
#: below 0 % or above 100 %
CALIBRATION_MAX_SHIFT_PTS = 20.0
#: how many of the run's top kernels (by time per step) name its workload beside its code in
#: the record's fingerprint (`advice/calibration.py` `workload_fingerprint`)
FINGERPRINT_KERNELS = 5

#: a stacked fix may move the mean relative difference of the first losses from the original's
#: by at most this much (bf16 autocast moved them by well under 1 % on the corpus)
STACK_LOSS_TOLERANCE = 0.05

#: DataLoader settings the loader fix gives a loader left at torch's defaults
LOADER_PREFETCH = 4
MAX_LOADER_WORKERS = 8

#: memory fixes (`advice/memory_fixes.py`): reserved memory above the peak allocation worth
#: a fix (below it the allocator's slack is normal), as a share of the peak
SLACK_SHARE = 0.10
#: a step that failed part-way holds only what it had allocated so far: at the end of its layers
#: it would hold that × (layers / layers run) (`analysis/memory_whatif.layers_run`), and its peak
#: (the output head, the loss and the backward after the layers) this many times more; without a
#: layer loop, this many times what it held. GPT-2 at batch 16 on the H200 (issue 26): the
#: measured split's peak implies 1.65× the layers' activations
OOM_STEP_GROWTH = 2.0
