"""One rule per bottleneck: price it in real time from the analysis, or return None.

Each rule measures what its fix would remove (ms per real step) and turns it into an expected
gain with the assumed saving named in `thresholds`. Host-side idle comes from the reconciled
idle split (`Analysis.real.idle_by_cause_ms`), so profiler inflation is already taken out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Unpack

import pandas as pd

from .. import units
from ..analysis.loader_pace import PACE_MIN_MS
from ..analysis.spikes import CATEGORY_OF, CAUSES
from ..analysis.summary import Analysis
from ..analysis.sync import upload_waits
from ..categories import Category
from . import fixes
from . import thresholds as T
from .findings import Finding, FindingData
from .fusion import memory_fusion_advised, memory_work
from .one_time_rule import one_time_rule
from .precision_by_gpu import Fp32Work, fp32_masks, host_paces_after, precision_advice
from .whatif import HAND_ROUTE, predictions_for


def _pct(a: Analysis, ms: float) -> float:
    return 100.0 * ms / a.real.step_ms if a.real.step_ms > 0 else 0.0


def gpu_weight(a: Analysis) -> float:
    """How much of a GPU-time saving shortens the real step (1 when the GPU is the bottleneck)."""
    return min(1.0, a.real.busy_frac / T.GPU_BOUND_BUSY_FRAC)


def _real(a: Analysis) -> str:
    src = "unprofiled median" if a.real.source == "baseline" else "profiled median"
    return f"{units.ms(a.real.step_ms)} {src}"


def _short(name: str, width: int = 60) -> str:
    name = name.removeprefix("void ")
    return name if len(name) <= width else name[: width - 1] + "…"


def _finding(a: Analysis, fid: str, cat: str, title: str, evidence: str, fix: str,
             cost_ms: float, saving: float, *, stall_ms: float = 0.0, measured_ms: float = 0.0,
             most_ms: float | None = None, **data: Unpack[FindingData]) -> Finding | None:
    """A priced finding: `cost_ms` per steady step (`saving` of it removed, or the what-if's
    prediction, never below `measured_ms`, a saving the unprofiled baseline measured, nor above
    `most_ms`, all the baseline's clock says the fix can save) and
    `stall_ms` per step over the long run of the stalls its fix removes; the gain is of the
    wall time a step costs (`Analysis.wall_ms`), spikes included. While DataLoader workers
    set the pace (analysis/loader_pace.py) no other fix shortens the step: its gain then is
    what it is worth once the loader keeps up (`after_input_fix_gain_pct`), not now."""
    cost_ms = min(cost_ms, a.real.step_ms)  # nothing saves more than the whole step
    # the gain is the what-if replay's where the step's graph is known, else the assumed saving
    predicted = predictions_for(a).get(cat)
    step_gain = predicted.gain_pct if predicted else _pct(a, cost_ms * saving)
    if measured_ms > 0 and _pct(a, measured_ms) > step_gain:
        step_gain, predicted = _pct(a, min(measured_ms, a.real.step_ms)), None
    if most_ms is not None and step_gain > _pct(a, most_ms):
        step_gain, predicted = _pct(a, max(0.0, most_ms)), None
    paced = cat != "input" and a.loader is not None and a.loader.paces(a.real.step_ms)
    if paced:  # worth 0 now, whatever it is worth later; kept where that is worth saying
        if step_gain >= T.MIN_FINDING_GAIN_PCT:
            data["after_input_fix_gain_pct"] = round(step_gain, 1)
            data["always"] = True
            evidence += _paced_text(a)
        step_gain, predicted = 0.0, None
    wall = a.wall_ms
    saved = step_gain / 100 * a.real.step_ms + stall_ms * T.STALL_SAVING
    gain = 100 * saved / wall if wall > 0 else step_gain
    if gain < T.MIN_FINDING_GAIN_PCT and not data.get("always"):
        return None
    data.pop("always", None)
    if predicted and predicted.requires:
        data["requires"] = predicted.requires
    if predicted and predicted.fusion_ms > 0 and wall > 0:
        data["fusion_gain_pct"] = round(100 * predicted.fusion_ms / wall, 1)
    if stall_ms > 0:
        data["stall_ms_per_step"] = round(stall_ms, 3)
    stalled = wall != a.real.step_ms
    return Finding(fid, cat, title, evidence, fix, cost_ms, round(gain, 1), FindingData(**data),
                   round(predicted.predicted_step_ms, 3) if predicted else None,
                   predicted.driver if predicted else "",
                   step_gain_pct=round(step_gain, 1) if stalled else None,
                   predicted_wall_ms=round(wall - saved, 3) if stalled else None)


def _paced_text(a: Analysis) -> str:
    """Why a fix saves nothing while the loader sets the pace (evidence)."""
    p = a.loader
    assert p is not None
    return (f" But in the unprofiled baseline the training process waits {units.ms(p.wait_ms)} "
            f"per step for its {p.workers} DataLoader worker(s): they set the pace, and this "
            f"fix shortens the step only once the input fix lets the loader keep up.")


def _loader_text(a: Analysis) -> str:
    """The baseline's wait for data, where the capture timed it (evidence)."""
    p = a.loader
    if p is None or p.wait_ms < PACE_MIN_MS:
        return ""
    who = (f"its {p.workers} DataLoader worker(s)" if p.workers
           else "DataLoader __next__ (the loading runs in the training process)")
    return (f" In the unprofiled baseline the training process spends {units.ms(p.wait_ms)} "
            f"per step (median of {p.steps}) waiting for {who}.")


def _stalls_text(a: Analysis, category: str) -> str:
    """The evidence of the stalls a fix of `category` removes ("" when there are none)."""
    s = a.spikes
    ms = a.stall_ms(category)
    if s is None or ms <= 0:
        return ""
    mine = [(st, c, x) for st in s.stalls for c, x in st.parts.items()
            if CATEGORY_OF.get(c) == category]
    what = "; ".join(sorted({CAUSES[c] for _, c, _ in mine}))
    period = next((st.period_steps for st, _, _ in mine if st.period_steps), None)
    every = f" every {period} steps" if period else ""
    return (f" Beyond the median step, {len({id(st) for st, _, _ in mine})} stall(s) of the "
            f"baseline ({units.ms(sum(x for _, _, x in mine))} above the median{every}: {what}) "
            f"cost {units.ms(ms)} per step over the long run, "
            f"{units.pct(100 * ms / a.wall_ms)} of the wall time.")


def input_rule(a: Analysis) -> Finding | None:
    """The GPU waits while the data pipeline produces the batch, at every step or at every
    epoch (DataLoader workers started again)."""
    cost = a.real.idle_by_cause_ms.get("input", 0.0)
    stall = a.stall_ms("input")
    waited = a.loader.saving_ms(a.real.step_ms, a.real.gpu_busy_ms) if a.loader else 0.0
    if (a.input_host_pct < T.INPUT_HOST_SHARE_PCT and _pct(a, cost) < T.MIN_FINDING_GAIN_PCT
            and _pct(a, waited) < T.MIN_FINDING_GAIN_PCT and stall <= 0):
        return None
    hidden = max(0.0, a.input_ms_per_step - cost)
    evidence = (
        f"The data pipeline (DataLoader __next__) takes {units.pct(a.input_host_pct)} of the host "
        f"timeline ({units.ms(a.input_ms_per_step)} per profiled step); the GPU waits for it "
        f"≈{units.ms(cost)} per step ({units.pct(_pct(a, cost))} of the {_real(a)}), the other "
        f"≈{units.ms(hidden)} are hidden behind GPU work for now and come back once the GPU work "
        f"shrinks." + _loader_text(a) + _stalls_text(a, "input"))
    return _finding(a, "input-pipeline", "input", "Data loading stalls the GPU", evidence,
                    fixes.INPUT, max(cost, waited), 1.0, stall_ms=stall, measured_ms=waited,
                    most_ms=waited if a.loader else None,
                    always=a.input_host_pct >= T.INPUT_HOST_SHARE_PCT
                    and not (a.loader and a.loader.keeps_up()),
                    host_share_pct=round(a.input_host_pct, 1),
                    data_ms_per_step=round(a.input_ms_per_step, 3))


def transfer_rule(a: Analysis) -> Finding | None:
    """Host<->device copies dominate or block."""
    t = a.transfers
    hd = t[t["kind"].isin(["HtoD", "DtoH"])] if len(t) else t
    if hd.empty:
        return None
    n = max(a.n_steps, 1)
    exposed_ms = float((hd["dur_us"] * (1 - hd["overlap_pct"] / 100)).sum()) / 1e3 / n
    idle_ms = a.real.idle_by_cause_ms.get("transfer", 0.0)
    cost = exposed_ms * gpu_weight(a) + idle_ms
    mb = float(hd["bytes"].sum()) / n / 1e6
    evidence = (
        f"{mb:.1f} MB per step cross PCIe/NVLink-C2C in {len(hd) / n:.0f} copies "
        f"({int(hd['pageable'].sum())} from pageable memory, {int(hd['blocking'].sum())} "
        f"blocking the host, median {hd['gbps'].median():.1f} GB/s); {units.ms(exposed_ms)} per "
        f"step of copying overlaps no compute and the GPU idles {units.ms(idle_ms)} per step in "
        f"copy calls.")
    return _finding(a, "transfers", "transfer", "Host-device copies are exposed", evidence,
                    fixes.TRANSFER, cost, T.TRANSFER_SAVING, mb_per_step=round(mb, 3),
                    pageable=int(hd["pageable"].sum()), blocking=int(hd["blocking"].sum()))


def sync_rule(a: Analysis) -> Finding | None:
    """The host repeatedly stops to wait for the GPU."""
    cost = a.real.idle_by_cause_ms.get("sync", 0.0)
    s = a.syncs
    if s.empty:
        return None
    n = max(a.n_steps, 1)
    who = s.assign(by=_caller_labels(s)).groupby("by")
    top = who["gpu_idle_after_us"].agg(["size", "sum"]).sort_values("sum", ascending=False)
    # the real count per step ("×1.8/step"), never truncated to a whole call
    callers = ", ".join(f"{name} ×{units.count(r['size'] / n)}/step"
                        for name, r in top.head(3).iterrows())
    held = a.sync_held_ms
    evidence = (
        f"{units.count(len(s) / n)} sync calls per step ({callers}); the GPU idles after them "
        f"≈{units.ms(cost)} per real step ({units.pct(_pct(a, cost))} of the {_real(a)}).")
    if held > 0:
        assert a.host_probe_ms is not None
        waited, between = a.data_wait_ms, a.beyond_probe_ms
        own = units.ms(a.host_probe_ms) + (f" (and {units.ms(waited)} waiting for data)"
                                           if waited > 0 else "")
        evidence += (
            f" Unprofiled, the host's own work takes {own} a step and the "
            f"GPU's {units.ms(a.real.gpu_busy_max_ms)} at most, the step "
            f"{units.ms(a.real.step_ms)}: ")
        if held < between - 1e-6 and a.probe_neighbour_ms is not None:
            evidence += (
                f"the step run beside the probe took {units.ms(a.probe_neighbour_ms)}, so ≈"
                f"{units.ms(held)} of the {units.ms(between)} between is the host waiting for "
                f"the GPU (the rest, the host running slower while the baseline was timed, "
                f"stays without the syncs).")
        else:
            evidence += (
                f"the ≈{units.ms(held)} between is the host waiting for the GPU, which it "
                f"would spend queueing the next step's work without the syncs.")
    data = FindingData(syncs_per_step=round(len(s) / n, 2),
                       top_callers=top.head(3).index.tolist())
    idle = s["gpu_idle_after_us"].to_numpy(dtype=float)
    uploads = upload_waits(s, a.transfers)
    if idle.sum() > 0 and idle[uploads].sum() >= T.UPLOAD_WAIT_SHARE * idle.sum():
        data["upload_wait_pct"] = round(100.0 * float(idle[uploads].sum() / idle.sum()), 1)
        evidence += (f" {units.pct(data['upload_wait_pct'])} of the idle after the syncs "
                     f"follows copies to the GPU from pageable memory, each waited for by the "
                     f"host inside its own `.to(device)`.")
    fix = fixes.SYNC_UPLOAD if "upload_wait_pct" in data else fixes.SYNC
    return _finding(a, "host-syncs", "sync", "The host waits for the GPU inside the step",
                    evidence, fix, max(cost, held), 1.0, measured_ms=held, **data)


def launch_rule(a: Analysis) -> Finding | None:
    """The GPU idles between many tiny kernels that launch slower than they run."""
    cost = a.real.idle_by_cause_ms.get("launch", 0.0)
    L = a.launch
    evidence = (
        f"{L['kernels_per_step']:.0f} kernels per step, median {L['median_kernel_us']:.1f} µs "
        f"on the GPU vs {L['median_launch_us']:.1f} µs to launch each; {L['short_kernel_pct']:.0f}"
        f"% run shorter than their launch. The GPU idles ≈{units.ms(cost)} per real step "
        f"({units.pct(_pct(a, cost))}) while the host dispatches the next kernel.")
    route = predictions_for(a).get("launch")
    by_hand = route is not None and route.route == HAND_ROUTE
    f = _finding(a, "launch-overhead", "launch", "Kernel launch overhead leaves the GPU idle",
                 evidence, fixes.LAUNCH_BY_HAND if by_hand else fixes.LAUNCH, cost,
                 T.LAUNCH_SAVING, kernels_per_step=round(L["kernels_per_step"], 1))
    if f is not None and by_hand:
        f.data["try_fixes"] = []  # no `--try` captures a step by hand (graphs compiles it)
    if f is not None and f.data.get("requires") == "sync":
        # the fix names the waits itself: a sync finding too small to be shown may not be there
        f.fix = (f"# first take the step's syncs out ({_sync_callers(a)}; .item(), .cpu(), "
                 "printing tensors):\n# a CUDA graph cannot capture a step that waits on the "
                 "GPU\n" + f.fix)
    return f


def _caller_labels(syncs: pd.DataFrame) -> pd.Series:
    """Who waited, per sync: the op that called it, else the API itself (a wait directly in
    the step, whose only enclosing range is the profiler's step, has no op to name)."""
    caller = syncs["caller"].astype(str)
    known = (caller != "") & ~caller.str.startswith("ProfilerStep#")
    return caller.where(known, syncs["api"].astype(str))


def _sync_callers(a: Analysis, top: int = 3) -> str:
    """The step's waits by caller, most frequent first ("aten::item ×1/step")."""
    s = a.syncs
    if s.empty:
        return "the step's host waits"
    by = _caller_labels(s).value_counts(sort=True)
    n = max(a.n_steps, 1)
    return ", ".join(f"{name} ×{units.count(c / n)}/step" for name, c in by.head(top).items())


def host_rule(a: Analysis) -> Finding | None:
    """The GPU idles while the host does work that launches nothing: at every step, or now and
    then (checkpoints written, full garbage-collector passes)."""
    cost = a.real.idle_by_cause_ms.get("host", 0.0)
    ops = a.ops
    cpu_only = ops[(ops["cuda_total_us"] <= 0)].sort_values("cpu_self_us", ascending=False)
    names = ", ".join(cpu_only["name"].head(3).astype(str)) or "unrecorded Python"
    evidence = (
        f"The GPU idles ≈{units.ms(cost)} per real step ({units.pct(_pct(a, cost))} of the "
        f"{_real(a)}) "
        f"while the host runs work that launches no GPU work (top host-only ops: {names}; "
        f"time outside any op is Python itself)." + _stalls_text(a, "host"))
    stall = a.stall_ms("host")
    return _finding(a, "host-work", "host", "Host-side work between launches", evidence,
                    fixes.HOST + (fixes.HOST_STALLS if stall > 0 else ""), cost, T.HOST_SAVING,
                    stall_ms=stall)


def precision_rule(a: Analysis) -> Finding | None:
    """fp32 matmuls miss the Tensor Cores, or (TF32 already on) run at half the bf16 rate."""
    k = a.kernels
    work = Fp32Work.of(k, "total_us", a.n_steps)
    if work.autocast_leads(a.arch):
        return _autocast_finding(a, work)
    if work.simt <= 0:
        return None
    slow = k[fp32_masks(k)["simt"]]
    total = float(k["total_us"].sum()) / 1e3 / max(a.n_steps, 1)
    names = "; ".join(_short(n) for n in slow["name"].head(2))
    cost = work.simt * gpu_weight(a)
    predicted = predictions_for(a).get("precision")
    # the host's own issuing, not its wait for data, is what autocast's casts would lengthen
    after = (predicted.predicted_step_ms - max(a.data_wait_ms, a.input_ms_per_step)
             if predicted else None)
    left = host_paces_after(after, a.real.gpu_busy_ms, work.simt)
    faster, fix = precision_advice(a.arch, left is not None)
    unit = a.arch.matrix_unit if a.arch else "Tensor Cores"
    evidence = (
        f"{units.ms(work.simt)} per step ({units.pct(100 * work.simt / total)} of GPU time) in "
        f"fp32 matmul kernels without {unit} ({names}). {faster} "
        f"{T.PRECISION_SPEEDUP:.0f}× faster or more on this GPU.")
    if left is not None and fix == fixes.TF32:
        evidence += (
            f" With them there the host sets the pace (its issuing predicted at "
            f"{units.ms(after or 0.0)} a step against at most {units.ms(left)} of GPU work): TF32 "
            "adds no kernel, where bf16 autocast would add a cast before each matmul for that "
            "host to issue.")
    return _finding(a, "fp32-matmuls", "precision", f"fp32 matmuls miss the {unit}",
                    evidence, fix, cost, 1 - 1 / T.PRECISION_SPEEDUP,
                    fp32_matmul_ms_per_step=round(work.simt, 3))


def _autocast_finding(a: Analysis, work: Fp32Work) -> Finding | None:
    """TF32 matmuls and fp32 attention (SDPA's memory-efficient kernels), priced as bf16
    autocast: twice the TF32 rate, the flash kernels."""
    k = a.kernels
    m = fp32_masks(k)
    total = float(k["total_us"].sum()) / 1e3 / max(a.n_steps, 1)
    names = "; ".join(_short(x) for x in k[m["tf32"] | m["attention"]]["name"].head(2))
    evidence = (
        f"{units.ms(work.tf32)} per step in fp32 matmuls on TF32 Tensor Cores and "
        f"{units.ms(work.attention)} in fp32 attention without them "
        f"({units.pct(100 * (work.tf32 + work.attention) / total)} of GPU time: {names}). "
        "bf16 autocast runs the matmuls at twice the TF32 rate on this GPU and sends attention "
        "to the flash kernels.")
    cost = (work.tf32 / 2 + work.attention * (1 - 1 / T.FLASH_ATTENTION_SPEEDUP)) * gpu_weight(a)
    return _finding(a, "bf16-autocast", "precision", "fp32 matmuls and attention below the "
                    "bf16 rate", evidence, fixes.AUTOCAST, cost, 1.0,
                    tf32_matmul_ms_per_step=round(work.tf32, 3),
                    fp32_attention_ms_per_step=round(work.attention, 3), try_fixes=["amp"])


def memory_rule(a: Analysis) -> Finding | None:
    """GPU time goes to unfused memory-bound kernels."""
    if not memory_fusion_advised(a):
        return None
    mem, total = memory_work(a)
    k = a.kernels[a.kernels["kind"].isin(T.MEMORY_KINDS)]
    names = "; ".join(_short(n, 50) for n in k["name"].head(2))
    evidence = (
        f"{units.ms(mem)} per step ({units.pct(100 * mem / total)} of GPU time) in memory-bound "
        f"elementwise/normalization/reduction kernels ({names}); each reads and writes its "
        f"tensors to HBM, fusion keeps them on chip.")
    return _finding(a, "unfused-memory-bound", "memory", "Unfused memory-bound kernels",
                    evidence, fixes.MEMORY, mem * gpu_weight(a), T.FUSION_SAVING,
                    memory_bound_ms_per_step=round(mem, 3))


def comm_rule(a: Analysis) -> Finding | None:
    """Collective communication is exposed instead of overlapped with compute."""
    c = a.comm
    if c["comm_ms"] <= 0:
        return None
    evidence = (
        f"NCCL collectives take {units.ms(c['comm_ms'])} per step, "
        f"{units.ms(c['exposed_ms'])} of it "
        f"with no compute kernel running (overlap {units.pct(c['overlap_pct'])}).")
    return _finding(a, "exposed-comm", "comm", "Communication is not overlapped", evidence,
                    fixes.COMM, c["exposed_ms"] * gpu_weight(a), T.COMM_SAVING,
                    comm_ms=round(c["comm_ms"], 3), exposed_ms=round(c["exposed_ms"], 3))


#: each category's rule on one trace (straggler and cross-rank comm: advice/distributed_rules.py;
#: compute is the verdict when no rule's finding is worth acting on)
RULES: dict[Category, Callable[[Analysis], Finding | None]] = {
    Category.INPUT: input_rule, Category.TRANSFER: transfer_rule, Category.SYNC: sync_rule,
    Category.LAUNCH: launch_rule, Category.HOST: host_rule, Category.PRECISION: precision_rule,
    Category.MEMORY: memory_rule, Category.COMM: comm_rule, Category.ONE_TIME: one_time_rule,
}
