"""Op-replay targets: a run's hottest kernels, each with the recorded op call that launched it.

The trace's `cpu_op` events carry the op's name, input shapes, dtypes, strides and scalar
arguments (with `record_shapes=True`); that is what the replay script needs to rebuild the
call. Targets that cannot be rebuilt stay in the list with their `skip_reason`, so the panel
says why a hot kernel is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import msgspec

from ..analysis.trace import load_trace

#: NVTX range around every replayed op (start/end, so ncu's --nvtx-include matches it)
OUTER_RANGE = "gpuprof_replay"
#: NVTX range around target i is this prefix + i: how a profiled kernel is tied to its op
TARGET_RANGE_PREFIX = "gpuprof_target_"
#: extra replayable ops prepared in case some of the top ones fail to rebuild
SPARES = 2
UNREPLAYABLE_TYPES = ("TensorList", "GenericList", "Device", "Layout", "str")


@dataclass
class ReplayTarget:
    """One hot kernel and the recorded op call that launched it."""

    index: int
    kernel: str
    op: str
    dims: list[Any]
    types: list[str]
    strides: list[Any]
    concrete: list[str]
    launches: int = 0
    total_us: float = 0.0
    pct_of_gpu: float = 0.0
    skip_reason: str = ""
    profiled: bool = False  # replayed inside the profiled range (spares run only if needed)
    kernels: list[str] = field(default_factory=list)  # every hot kernel this call launched


class ReplayTargetJson(TypedDict):
    """A `ReplayTarget` as JSON (`dataclasses.asdict`; the session's description holds these)."""

    index: int
    kernel: str
    op: str
    dims: list[Any]
    types: list[str]
    strides: list[Any]
    concrete: list[str]
    launches: int
    total_us: float
    pct_of_gpu: float
    skip_reason: str
    profiled: bool
    kernels: list[str]


class _Args(msgspec.Struct, gc=False):
    """The recorded arguments of one op call, as the trace's JSON names them."""

    external_id: int = msgspec.field(default=-1, name="External id")
    dims: list[Any] = msgspec.field(default_factory=list, name="Input Dims")
    types: list[str] = msgspec.field(default_factory=list, name="Input type")
    strides: list[Any] = msgspec.field(default_factory=list, name="Input Strides")
    concrete: list[Any] = msgspec.field(default_factory=list, name="Concrete Inputs")


class _Event(msgspec.Struct, gc=False):
    """A trace event, decoded only as far as replay needs."""

    cat: str = ""
    args: _Args | None = None


class _File(msgspec.Struct, gc=False):
    """A trace file, decoded only as far as replay needs."""

    traceEvents: list[_Event] = []


def recorded_args(trace_path: str | Path, external_ids: set[int]) -> dict[int, _Args]:
    """Strides and scalar inputs of the given ops (the event table keeps only shapes and dtypes)."""
    import gzip

    raw = Path(trace_path).read_bytes()
    data = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    try:
        doc = msgspec.json.decode(data, type=_File)
    except msgspec.ValidationError:
        return {}
    return {
        e.args.external_id: e.args
        for e in doc.traceEvents
        if e.cat == "cpu_op" and e.args is not None and e.args.external_id in external_ids
    }


def replay_targets(
    trace_path: str | Path, top: int = 3, spares: int = SPARES
) -> list[ReplayTarget]:
    """The `top` replayable kernels by GPU time (+ `spares`), each with the op call behind it.

    Hotter kernels that cannot be replayed stay in the list with their `skip_reason`; spares
    stand in for targets whose rebuild fails at run time (`replay.run_replay(top=...)`).
    """
    trace = load_trace(trace_path)
    kern = trace.of("kernel")
    if kern.empty:
        return []
    ops = trace.of("cpu_op")
    ops = ops[ops["external_id"] >= 0].drop_duplicates("external_id").set_index("external_id")
    k = kern.assign(name=kern["name"].astype(str))
    total = float(k["dur_us"].sum())
    hot = k.groupby("name")["dur_us"].agg(["sum", "size"]).sort_values("sum", ascending=False)
    chosen: dict[str, tuple[int, float, int]] = {}
    for name in hot.index[: (top + spares) * 3]:
        rows = k[(k["name"] == name) & k["external_id"].isin(ops.index)]
        if rows.empty:
            continue
        sig = rows.assign(
            sig=rows["external_id"].map(
                lambda e: "|".join(
                    str(ops.at[e, c]) for c in ("name", "input_dims", "input_types")
                )
            )
        )
        best = sig.groupby("sig")["dur_us"].sum().idxmax()
        chosen[name] = (
            int(sig.loc[sig["sig"] == best, "external_id"].iloc[0]),
            float(hot["sum"][name]),
            int(hot["size"][name]),
        )
    args = recorded_args(trace_path, {v[0] for v in chosen.values()})
    targets: list[ReplayTarget] = []
    by_ext: dict[int, ReplayTarget] = {}
    for name, (ext, us, n) in chosen.items():
        if sum(1 for t in targets if not t.skip_reason) == top + spares:
            break
        if ext in by_ext:  # two hot kernels launched by the same call: one replay covers both
            by_ext[ext].kernels.append(name)
            continue
        a = args.get(ext)
        op = str(ops.at[ext, "name"])
        t = ReplayTarget(
            len(targets),
            name,
            op,
            a.dims if a else [],
            a.types if a else [],
            a.strides if a else [],
            [str(c) for c in a.concrete] if a else [],
            n,
            us,
            100.0 * us / total if total else 0.0,
            kernels=[name],
        )
        t.skip_reason = unreplayable(t)  # kept, so the panel says why a hot kernel is missing
        targets.append(t)
        by_ext[ext] = t
    return targets


def unreplayable(t: ReplayTarget) -> str:
    """Why a target's op call cannot be rebuilt from the trace ('' when it can)."""
    if "::" not in t.op:
        return f"{t.op} is not a dispatcher op"
    if not t.types:
        return "no recorded input shapes (capture with record_shapes=True)"
    bad = sorted({ty for ty in t.types if ty in UNREPLAYABLE_TYPES})
    if bad:
        return f"inputs of type {', '.join(bad)} are not recorded with their contents"
    return ""
