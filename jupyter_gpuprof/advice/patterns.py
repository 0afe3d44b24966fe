"""Findings written against the user's own code: call sites, patterns, and what is in use.

The rules price a bottleneck from the trace; this module makes the advice concrete:
- `where`: the user's `file:line` behind a finding, from the call sites the capture recorded
  in one warm-up step (capture/callsites.py): the `.item()` behind a sync, the DataLoader loop,
  the call behind the hottest op;
- patterns read from the op counts: per-parameter `.item()` logging (`aten::item` and
  `linalg_vector_norm` many times a step) becomes one batched `torch._foreach_norm` and a
  single `.item()`;
- a fix never recommends what the trace shows already in use (fused AdamW, SDPA/flash/cuDNN
  attention, torch.compile, CUDA graphs): those lines are dropped from the fix text.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import cast

import numpy as np
import pandas as pd

from .. import units
from ..analysis.kernels import COMPILER_KERNEL_PREFIX
from ..analysis.name_masks import containing
from ..analysis.summary import Analysis
from ..store.meta_blocks import READ_BACK_CALLS, CallSiteMeta
from .findings import Finding
from .thresholds import PER_PARAM_MIN_CALLS

#: calls that make the host wait for the GPU
SYNC_CALLS = READ_BACK_CALLS
TRANSFER_CALLS = ("to", "cuda", "copy_", "pin_memory")
DATA_CALLS = ("DataLoader.__next__",)
#: Python calls behind an aten op whose own name differs from it
OP_CALLS = {
    "aten::mm": ("linear", "matmul", "mm", "__matmul__", "einsum"),
    "aten::addmm": ("linear", "addmm"), "aten::bmm": ("matmul", "bmm", "__matmul__", "einsum"),
    "aten::linear": ("linear",), "aten::convolution": ("conv1d", "conv2d", "conv3d"),
    "aten::cudnn_convolution": ("conv1d", "conv2d", "conv3d"),
    "aten::_local_scalar_dense": ("item",), "aten::item": ("item",),
    "aten::linalg_vector_norm": ("norm", "vector_norm"), "aten::norm": ("norm",),
    "aten::_to_copy": ("to", "cuda", "cpu"), "aten::copy_": ("to", "copy_", "cuda", "cpu"),
}

GRAD_NORM_FIX = """\
# one norm for all gradients on the GPU, one sync per step (not one per parameter):
grads = [p.grad for p in model.parameters() if p.grad is not None]
norms = torch._foreach_norm(grads)                   # one batched kernel launch
total = torch.linalg.vector_norm(torch.stack(norms))
# or: total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
log({"grad_norm": total.item()})                     # a single .item(); or every N steps"""

#: fix lines to drop when the trace shows the thing already in use: marker -> line snippets
IN_USE_LINES = {
    "fused_adamw": ("fused=True",),
    "sdpa": ("scaled_dot_product_attention",),
    "compile": ("torch.compile",),
    "cuda_graphs": ("torch.cuda.graphs", "reduce-overhead", "make_graphed_callables"),
}


def in_use(a: Analysis) -> set[str]:
    """What the trace shows the step already uses (so no fix recommends it again)."""
    # object strings in C (iterating a string column boxes each of 333 k names in Python)
    names = a.ops["name"].astype(str).to_numpy(dtype=object) if len(a.ops) else np.zeros(0, object)
    ops = set(names)
    kernels = " ".join(a.kernels["name"].astype(str).head(200)) if len(a.kernels) else ""
    used = set()
    if {"aten::_fused_adamw_", "aten::_fused_adam_", "aten::_fused_sgd_",
            "aten::_fused_adagrad_"} & ops:
        used.add("fused_adamw")
    if _any_starts(names, ("aten::_scaled_dot_product", "aten::scaled_dot_product")) \
            or any(k in kernels for k in ("flash", "fmha", "sdpa", "cudnn_generated_fort_native")):
        used.add("sdpa")
    if COMPILER_KERNEL_PREFIX in kernels or _any_starts(names, ("Torch-Compiled Region",)):
        used.add("compile")
    if a.launch.get("graph_launches"):
        used.add("cuda_graphs")
    return used


def _any_starts(names: np.ndarray, prefixes: tuple[str, ...]) -> bool:
    """Whether a name starts with one of the prefixes: tested on the names holding one."""
    return any(names[i].startswith(prefixes) for i in containing(names, prefixes))


def prune_fix(fix: str, used: Iterable[str]) -> str:
    """The fix without lines recommending what is already in use (said once at the end)."""
    drop = [snippet for u in used for snippet in IN_USE_LINES.get(u, ())]
    kept = [ln for ln in fix.splitlines() if not any(s in ln for s in drop)]
    if len(kept) == len(fix.splitlines()):
        return fix
    names = sorted(u.replace("_", " ") for u in used if any(
        s in fix for s in IN_USE_LINES.get(u, ())))
    return "\n".join(kept + [f"# already in use in this step: {', '.join(names)}"])


def _per_step(a: Analysis, names: tuple[str, ...]) -> float:
    """Calls per step of the named ops (0 when absent)."""
    ops = a.ops
    if not len(ops) or "calls_per_step" not in ops:
        return 0.0
    return float(ops.loc[ops["name"].isin(names), "calls_per_step"].sum())


def per_parameter_norms(a: Analysis) -> dict[str, float] | None:
    """Per-parameter norm logging seen in the op counts: item and norm calls per step."""
    items = _per_step(a, ("aten::item",))
    norms = _per_step(a, ("aten::linalg_vector_norm", "aten::norm"))
    if items >= PER_PARAM_MIN_CALLS and norms >= PER_PARAM_MIN_CALLS:
        return {"item_per_step": items, "norm_per_step": norms}
    return None


#: the fields of a call site that `where` shows
WHERE_FIELDS = ("file", "line", "code", "call", "calls", "cell")


def _calls(site: CallSiteMeta) -> int:
    """How often the recorded step called from a site (0 when not recorded)."""
    n = site.get("calls")
    return int(n) if isinstance(n, (int, float)) else 0


def _waits(site: CallSiteMeta) -> int:
    """Of a site's calls, those that can wait for the GPU (not read-backs of host tensors)."""
    host = site.get("host_reads")
    return _calls(site) - (int(host) if isinstance(host, (int, float)) else 0)


def _best(sites: Sequence[CallSiteMeta], calls: Iterable[str],
          near: Sequence[CallSiteMeta] | None = None) -> CallSiteMeta | None:
    """The most-called site of any of `calls`; with `near`, prefer lines that also run those.
    Read-backs of host tensors count for nothing: they wait for no GPU.

    `sites`: the call sites as meta.json holds them (capture/callsites.py), which the store
    checks on load (`CallSiteSchema`): the one picked is returned as a `CallSiteMeta`."""
    wanted = set(calls)
    hits = [s for s in sites if s.get("call") in wanted]
    hits = [s for s in hits if _waits(s) > 0] or hits
    if not hits:
        return None
    if near:
        lines = {(s["file"], s["line"]) for s in near}
        close = [s for s in hits if (s["file"], s["line"]) in lines]
        hits = close or hits
    top = max(hits, key=_waits)
    return cast(CallSiteMeta, {k: top.get(k) for k in WHERE_FIELDS})


def _calls_for(op: str) -> tuple[str, ...]:
    """The Python calls that can run an aten op."""
    base = op.removeprefix("aten::").strip("_")
    return OP_CALLS.get(op, ()) + (base, base + "_")


def _hot_op_site(ops: pd.DataFrame, sites: Sequence[CallSiteMeta],
                 by: str = "cuda_self_us") -> CallSiteMeta | None:
    """Call site of the first of the hottest ops (by `by`) that the user's code calls."""
    if not len(ops):
        return None
    for name in ops.sort_values(by, ascending=False).head(5)["name"].astype(str):
        if (site := _best(sites, _calls_for(name))) is not None:
            return site
    return None


def where_for(f: Finding, a: Analysis,
              sites: Sequence[CallSiteMeta]) -> CallSiteMeta | None:
    """The user's line behind a finding, when the capture recorded one."""
    if not sites:
        return None
    if f.category == "sync" and f.data.get("upload_wait_pct"):
        return _best(sites, TRANSFER_CALLS)  # the `.to(device)` that waits for its copy
    if f.category == "sync":
        norms = [s for s in sites if s.get("call") in ("norm", "vector_norm")]
        return _best(sites, SYNC_CALLS, near=norms if f.id == "per-parameter-item" else None)
    if f.category == "input":
        return _best(sites, DATA_CALLS)
    if f.category == "transfer":
        return _best(sites, TRANSFER_CALLS)
    if f.category == "host":
        host_only = a.ops[a.ops["cuda_total_us"] <= 0] if len(a.ops) else a.ops
        return _hot_op_site(host_only, sites, "cpu_self_us") if len(host_only) else None
    if f.category in ("memory", "precision", "compute"):
        return _hot_op_site(a.ops, sites)
    return None


def _grad_norm_finding(f: Finding, seen: dict[str, float]) -> Finding:
    """The sync finding rewritten for per-parameter norm logging."""
    evidence = (f"{seen['item_per_step']:.0f} aten::item and {seen['norm_per_step']:.0f} "
                f"vector norms per step: a norm and a .item() per parameter, each .item() a "
                f"host-device sync. {f.evidence}")
    return dataclasses.replace(
        f, id="per-parameter-item", title="Per-parameter .item() logging syncs once per tensor",
        evidence=evidence, fix=GRAD_NORM_FIX,
        data={**f.data, "item_per_step": round(seen["item_per_step"], 1),
              "norm_per_step": round(seen["norm_per_step"], 1)})


def _pattern_only(a: Analysis) -> Finding:
    """The per-parameter finding when the sync rule found too little idle to report."""
    cost = float(a.real.idle_by_cause_ms.get("sync", 0.0))
    gain = 100.0 * cost / a.real.step_ms if a.real.step_ms > 0 else 0.0
    return Finding("host-syncs", "sync", "The host waits for the GPU inside the step",
                   f"The GPU idles after these syncs ≈{units.ms(cost)} per real step.", "",
                   round(cost, 3), round(gain, 1))


def refine(findings: list[Finding], a: Analysis,
           sites: Sequence[CallSiteMeta] | None
           ) -> list[tuple[Finding, CallSiteMeta | None]]:
    """Each finding with patterns applied, in-use advice dropped, and its user line.

    Per-parameter norm logging is reported even when its syncs cost too little to pass the
    rules' threshold today: the pattern is a defect whichever way the step is bound.
    """
    used = in_use(a)
    seen = per_parameter_norms(a)
    if seen is not None and not any(f.category == "sync" for f in findings):
        findings = [*findings, _pattern_only(a)]
    out = []
    for f in findings:
        if f.category == "sync" and seen is not None:
            f = _grad_norm_finding(f, seen)
        f = dataclasses.replace(f, fix=prune_fix(fit_optimizer(f.fix, a.optimizers), used))
        where = where_for(f, a, sites or [])
        if where is not None:
            loc = f"{where['file']}:{where['line']}"
            f = dataclasses.replace(f, fix=f"# {loc}: {where['code']}\n{f.fix}")
        out.append((f, where))
    return out


#: optimizers whose step torch can run as one fused kernel (`fused=True`); others get `foreach`
FUSED_OPTIMIZERS = frozenset({"Adam", "AdamW", "SGD", "Adagrad"})
#: the fix line that stands for "your optimizer, in a few launches" (advice/fixes.py)
OPTIMIZER_LINE = "opt = torch.optim.AdamW(model.parameters(), fused=True)"


#: the update line of the step captured by hand (advice/fixes.py LAUNCH_BY_HAND)
HAND_UPDATE_LINE = "    opt.step()                         # the update, as the loop makes it"
#: optimizers whose step a CUDA graph holds once made with `capturable=True` (their step count
#: on the GPU); SGD's holds as it is; the others (Adagrad, LBFGS) step outside the graph
CAPTURABLE_OPTIMIZERS = frozenset({"Adam", "AdamW", "Adadelta", "RMSprop", "Adamax", "NAdam",
                                   "RAdam", "ASGD", "Rprop"})


def _hand_update(optimizers: Sequence[str]) -> list[str]:
    """The update inside a step captured by hand, for the optimizers the trace shows (none: the
    loop's own update by hand)."""
    if not optimizers:
        return ["    # your update by hand, as the loop makes it now (it steps no optimizer)"]
    out = []
    for cls in optimizers:
        if cls in CAPTURABLE_OPTIMIZERS:
            out.append(f"    opt.step()   # your {cls}, made with capturable=True (its step "
                       "count on the GPU)")
        elif cls == "SGD":
            out.append("    opt.step()   # your SGD: a graph holds its step as it is")
        else:
            out.append(f"    # your {cls} cannot step inside a graph: call opt.step() after "
                       "each replay")
    return out


def fit_optimizer(fix: str, optimizers: Sequence[str]) -> str:
    """The fix's optimizer line written for the optimizers the trace shows stepping: the user's
    own class, never another (AdamW's decoupled weight decay is not SGD's or Adam's), and no
    line at all for a loop that updates its parameters itself; inside a step captured by hand,
    the update as that class can be captured, or the loop's own."""
    lines = []
    for ln in fix.splitlines():
        if ln == HAND_UPDATE_LINE:
            lines += _hand_update(optimizers)
            continue
        if not ln.startswith(OPTIMIZER_LINE):
            lines.append(ln)
            continue
        for cls in optimizers:
            flag = "fused=True" if cls in FUSED_OPTIMIZERS else "foreach=True"
            lines.append(f"opt = torch.optim.{cls}(params, ..., {flag})   # your {cls}, its "
                         "step in a few launches")
    return "\n".join(lines)
