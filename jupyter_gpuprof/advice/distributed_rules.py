"""Cross-rank advice: the straggler and communication findings, and the verdict over all ranks.

A single rank's trace cannot tell waiting from transferring: a rank that waits for a slow peer
shows long, exposed all-reduce kernels and would be told to tune its buckets. With every rank
lined up (`analysis.distributed`), the wait goes to the straggler finding (priced as the time
the others wait for the slow rank) and only the exposed *transfer* goes to the comm finding.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from .. import units
from ..analysis.distributed import Distributed
from ..analysis.summary import Analysis
from . import thresholds as T
from .findings import Finding, Verdict
from .rules import gpu_weight
from .verdict import SUMMARIES, Advice, advise, checked, confidence_of

#: the single-rank rule that the cross-rank comm finding replaces
SINGLE_RANK_COMM_ID = "exposed-comm"

STRAGGLER_GPU_WORK_FIX = """\
# one rank runs more GPU work per step than the others: give every rank the same work
sampler = DistributedSampler(dataset, drop_last=True)         # equal shards per rank
loader = DataLoader(dataset, batch_size=B, sampler=sampler)   # same batch size on every rank
# variable-length inputs: bucket by length or pad so every rank does the same FLOPs;
# same work but slower: check that GPU (nvidia-smi clocks/temperature, other processes)"""

STRAGGLER_HOST_FIX = """\
# one rank's host is late to the collective: feed its GPU as fast as the others
loader = DataLoader(dataset, batch_size=B, sampler=sampler, num_workers=8,
                    pin_memory=True, persistent_workers=True, prefetch_factor=4)
# check that rank's CPU cores (numactl --cpunodebind / taskset), competing processes and
# storage (local cache, not a network filesystem); logging/checkpointing off the step"""

COMM_FIX = """\
model = DDP(model, bucket_cap_mb=100,            # fewer, larger all-reduces (default 25)
            gradient_as_bucket_view=True,        # no copy of gradients into buckets
            static_graph=True)                   # fixed graph: buckets ready in order
# gradient accumulation: all-reduce once every k micro-batches
with model.no_sync():
    loss_fn(model(x1), y1).backward()            # no communication
loss_fn(model(x2), y2).backward()                # this backward all-reduces
# halve the bytes on the wire
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
model.register_comm_hook(None, default_hooks.bf16_compress_hook)"""

DIST_SUMMARIES = {
    "straggler": "Rank {rank} is a straggler: {what}; every other rank waits for it in the "
                 "collectives",
    "comm": "Collective communication is exposed: the all-reduce transfer is not hidden "
            "behind compute",
}


def _pct(step_ms: float, ms: float) -> float:
    return 100.0 * ms / step_ms if step_ms > 0 else 0.0


def _own_top(a: Analysis | None) -> Finding | None:
    """The slow rank's own main bottleneck, from its single-rank advice."""
    if a is None:
        return None
    found = [f for f in advise(a).findings if f.id != SINGLE_RANK_COMM_ID]
    return found[0] if found else None


def straggler_rank(d: Distributed, step_ms: float) -> int | None:
    """The rank the others wait for, if it passes the straggler thresholds; else None.

    The one place this is decided: the straggler finding rests on it and the summary carries
    its answer (`distributed.ranks[].straggler`), which the sidebar shows without re-deciding.
    """
    s = d.slowest()
    if s is None or d.n_matched == 0 or step_ms <= 0:
        return None
    extra, wait = float(s["extra_ms"]), float(s["others_wait_ms"])
    if _pct(step_ms, extra) < T.STRAGGLER_MIN_PCT or wait < T.STRAGGLER_WAIT_SHARE * extra:
        return None
    return int(s["rank"])


def straggler_rule(d: Distributed, step_ms: float,
                   own: Analysis | None = None) -> Finding | None:
    """One rank needs more time per step than the others, who wait for it in collectives."""
    s = d.slowest()
    if s is None or straggler_rank(d, step_ms) is None:
        return None
    extra, wait = float(s["extra_ms"]), float(s["others_wait_ms"])
    rank, gpu, host = int(s["rank"]), float(s["gpu_work_ms"]), float(s["host_delay_ms"])
    inp = float(s["input_ms"])
    r = d.ranks.set_index("rank")
    others = r.drop(index=rank)
    if s["phase"] == "gpu_work":
        what = f"it does {units.ms(gpu)} more GPU work per step than the other ranks"
        fix, saving = STRAGGLER_GPU_WORK_FIX, T.STRAGGLER_GPU_WORK_SAVING
        title = f"Rank {rank} is a straggler: more GPU work per step"
    else:
        source = ("data loading" if inp >= T.INPUT_EXPLAINS_SHARE * host else "host time")
        what = (f"its GPU waits {units.ms(host)} per step longer for its host ({source}) "
                f"before the collective")
        fix, saving = STRAGGLER_HOST_FIX, T.STRAGGLER_HOST_SAVING
        title = f"Rank {rank} is a straggler: host delay before the collective ({source})"
    top = _own_top(own)
    row = r.loc[rank, ["compute_ms", "idle_ms", "last_arrival_pct"]].to_numpy(dtype=float)
    compute, idle, last_pct = (float(v) for v in row)
    evidence = (
        f"Rank {rank} needs {units.ms(s['own_ms'])} of its own per step (GPU compute "
        f"{units.ms(compute)} + GPU idle {units.ms(idle)}) vs "
        f"{units.ms(s['own_ms'] - extra)} on the other ranks (median): {units.ms(extra)} more, "
        f"{units.ms(gpu)} of it GPU work and {units.ms(host)} host delay"
        + (f" ({units.ms(inp)} more data loading)" if abs(inp) >= 0.05 else "")
        + f". The other ranks' collectives wait {units.ms(wait)} per step for it, "
        f"{units.ms(float(others['exposed_comm_ms'].median()))} of that with nothing else to "
        f"run (it "
        f"arrives last at {units.pct(last_pct)} of {d.n_matched} matched "
        f"collectives; their GPUs compute only {units.ms(float(others['compute_ms'].median()))} "
        f"per "
        f"step).")
    if top is not None:
        evidence += (f" Rank {rank}'s own main bottleneck: {top.title} (≈"
                     f"{units.pct(top.expected_gain_pct)} of its step).")
        fix += f"\n# then rank {rank}'s own bottleneck — {top.title}:\n{top.fix}"
    gain = _pct(step_ms, extra * saving)
    return Finding("straggler", "straggler", title, evidence, fix, extra,
                   round(gain, 1), {"rank": rank, "phase": str(s["phase"]),
                                    "extra_ms": round(extra, 3), "gpu_work_ms": round(gpu, 3),
                                    "host_delay_ms": round(host, 3), "input_ms": round(inp, 3),
                                    "others_wait_ms": round(wait, 3), "what": what,
                                    "own_finding": top.id if top else None})


def comm_rule(d: Distributed, step_ms: float, gpu_weight: float = 1.0) -> Finding | None:
    """Collective transfers (not waits for a slow peer) run with no compute to hide them."""
    r = d.ranks
    if r.empty or float(r["comm_ms"].max()) <= 0:
        return None
    exposed = float(r["exposed_transfer_ms"].mean()) if d.n_matched else float(
        r["exposed_comm_ms"].mean())
    cost = exposed * gpu_weight
    gain = _pct(step_ms, cost * T.COMM_SAVING)
    if gain < T.MIN_FINDING_GAIN_PCT:
        return None
    per = "; ".join(
        f"rank {int(x['rank'])}: {units.ms(x['comm_ms'])} "
        f"({units.pct(x['comm_pct_of_step'])} of the step), "
        f"{units.ms(x['exposed_comm_ms'])} exposed, {units.ms(x['wait_ms'])} waiting, "
        f"{units.ms(x['exposed_transfer_ms'])} exposed transfer" for _, x in r.head(8).iterrows())
    evidence = (f"Collectives per step — {per}. {units.ms(exposed)} per step of transfer runs "
                f"with no compute beside it on average over {len(r)} ranks (time spent waiting "
                f"for a slower rank is excluded: that is imbalance, not bandwidth).")
    return Finding("exposed-comm-ranks", "comm", "Communication is exposed on every rank",
                   evidence, COMM_FIX, round(cost, 3), round(gain, 1),
                   {"exposed_transfer_ms": round(exposed, 3),
                    "comm_ms": round(float(r["comm_ms"].mean()), 3)})


def distributed_findings(d: Distributed, a: Analysis,
                         analyses: Sequence[Analysis] = ()) -> list[Finding]:
    """The cross-rank findings for a run whose first rank's analysis is `a`."""
    s = d.slowest()
    own = None
    if s is not None:
        own = next((x for x in analyses if x.info.rank == int(s["rank"])), None)
    found = [straggler_rule(d, a.real.step_ms, own), comm_rule(d, a.real.step_ms, gpu_weight(a))]
    return [f for f in found if f is not None]


def merge_advice(advice: Advice, a: Analysis, d: Distributed,
                 analyses: Sequence[Analysis] = ()) -> Advice:
    """Single-rank advice plus the cross-rank findings, with the verdict taken over all ranks.

    The verdict is the largest priced finding, a straggler included (its price is what the
    others wait for it); the single-rank comm finding is replaced by the cross-rank one.
    """
    if not a.gpu_available:
        return advice
    cross = distributed_findings(d, a, analyses)
    found = [f for f in advice.findings if f.id != SINGLE_RANK_COMM_ID] + cross
    found.sort(key=lambda f: f.expected_gain_pct, reverse=True)
    top = found[0] if found else None
    second = next((f for f in found if f is not top), None)
    if top is None or (top.category != "straggler"
                       and top.expected_gain_pct < T.MIN_VERDICT_GAIN_PCT):
        verdict = advice.verdict
        if verdict.category == "comm":  # it rested on waits that the ranks explain away
            verdict = Verdict("compute", "No rank waits long for another and collectives are "
                              "hidden: nothing big to fix across ranks.", verdict.confidence,
                              verdict.reasons)
        return checked(Advice(_with_rank_reasons(verdict, d), found))
    cat = top.category
    if cat == "straggler":
        head = DIST_SUMMARIES[cat].format(rank=top.data["rank"], what=top.data["what"])
    else:
        head = DIST_SUMMARIES.get(cat) or SUMMARIES.get(cat, cat)
    summary = f"{head}: fixing it should save ≈{units.pct(top.expected_gain_pct)} of the " \
              f"{units.ms(a.real.step_ms)} step."
    confidence, reasons = confidence_of(a, top, second, cat)
    return checked(Advice(_with_rank_reasons(Verdict(cat, summary, confidence, reasons), d),
                          found))


def _with_rank_reasons(v: Verdict, d: Distributed) -> Verdict:
    r = d.ranks
    if r.empty:
        return v
    off = float(r["clock_offset_us"].abs().max())
    note = (f"{len(r)} ranks lined up on {d.n_matched} collectives matched across ranks "
            f"(clock offsets up to {off:.0f} µs; {d.n_unmatched} unmatched dropped); step "
            f"times {units.ms(r['step_ms'].min())} to {units.ms(r['step_ms'].max())}")
    return Verdict(v.category, v.summary, v.confidence, [*v.reasons, note])


def straggler_of(advice: Advice) -> int | None:
    """The rank this advice names a straggler (its straggler finding's), else None."""
    found = next((f for f in advice.findings if f.category == "straggler"), None)
    return int(found.data["rank"]) if found is not None else None


def rank_table(d: Distributed, straggler: int | None = None) -> pd.DataFrame:
    """Per-rank figures joined with their imbalance and the straggler flag (for reports)."""
    table = d.ranks.merge(d.imbalance[["rank", "extra_ms", "phase"]], on="rank", how="left")
    return table.assign(straggler=table["rank"] == straggler)
