"""Op replay: rebuild the ops that launched a run's hottest kernels from their recorded name,
shapes, dtypes, strides and scalar arguments, and profile them under ncu in a fresh process.

This profiles kernels without rerunning (or even having) the user's program, the way
Inductor's `--ncu`, TraceLens EventReplay and PARAM et_replay do. The generated script is
standalone (only torch) and is kept in the run folder, so a replay can be rerun by hand.
Inputs are random: kernels whose speed depends on values (indexing, sparsity) are
approximations, and cuBLAS may pick another algorithm, so replayed kernel names are checked
against the recorded ones (`name_match`).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from ..analysis.ncu_metrics import attribute_targets, frame, raw_records, read_details_rules
from ..analysis.trace import load_trace
from .ncu import NcuOptions, build_command, export_csv, find_ncu, ncu_version, run_ncu

RANGE = "gpuprof_replay"
MARK = "GPUPROF_REPLAY "
#: kernels profiled per replayed op at most (an op rarely launches more)
KERNELS_PER_OP = 6
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


class _Args(msgspec.Struct, gc=False):
    external_id: int = msgspec.field(default=-1, name="External id")
    dims: list[Any] = msgspec.field(default_factory=list, name="Input Dims")
    types: list[str] = msgspec.field(default_factory=list, name="Input type")
    strides: list[Any] = msgspec.field(default_factory=list, name="Input Strides")
    concrete: list[Any] = msgspec.field(default_factory=list, name="Concrete Inputs")


class _Event(msgspec.Struct, gc=False):
    cat: str = ""
    args: _Args | None = None


class _File(msgspec.Struct, gc=False):
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
    stand in for targets whose rebuild fails at run time (`run_replay(top=...)`).
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
                lambda e: (
                    f"{ops.at[e, 'name']}|{ops.at[e, 'input_dims']}|{ops.at[e, 'input_types']}"
                )
            )
        )
        best = sig.groupby("sig")["dur_us"].sum().idxmax()
        chosen[name] = (
            int(sig.loc[sig["sig"] == best, "external_id"].iloc[0]),
            float(hot.at[name, "sum"]),
            int(hot.at[name, "size"]),
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
        t.skip_reason = _unreplayable(t)  # kept, so the panel says why a hot kernel is missing
        targets.append(t)
        by_ext[ext] = t
    return targets


def _unreplayable(t: ReplayTarget) -> str:
    if "::" not in t.op:
        return f"{t.op} is not a dispatcher op"
    if not t.types:
        return "no recorded input shapes (capture with record_shapes=True)"
    bad = sorted({ty for ty in t.types if ty in UNREPLAYABLE_TYPES})
    if bad:
        return f"inputs of type {', '.join(bad)} are not recorded with their contents"
    return ""


SCRIPT = '''"""Replays recorded PyTorch ops for Nsight Compute (generated by %ncu, jupyter_gpuprof).

Run under ncu with: --nvtx --nvtx-include {range}  (start/end range, no trailing '/').
"""
import json
import os
import sys

import torch

DEVICE = os.environ.get("GPUPROF_REPLAY_DEVICE", "cuda")  # "cpu" checks the rebuild without a GPU
TARGETS = json.loads(r"""{targets}""")
WARMUP = {warmup}
LIMIT = {limit}  # ops profiled; later ones are spares for ops that fail to rebuild
DTYPES = {{"float": torch.float32, "double": torch.float64, "c10::Half": torch.float16,
          "c10::BFloat16": torch.bfloat16, "long int": torch.int64, "int": torch.int32,
          "short int": torch.int16, "signed char": torch.int8, "unsigned char": torch.uint8,
          "bool": torch.bool}}
for _name, _attr in (("c10::Float8_e4m3fn", "float8_e4m3fn"), ("c10::Float8_e5m2", "float8_e5m2")):
    if hasattr(torch, _attr):
        DTYPES[_name] = getattr(torch, _attr)


def scalar(text):
    if text in ("True", "False"):
        return text == "True"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text.startswith("["):
        return json.loads(text.replace("True", "true").replace("False", "false"))
    return text


def tensor(dims, strides, dtype, bound):
    strides = strides if strides and len(strides) == len(dims) else torch.empty(dims).stride()
    numel = 1 + sum((d - 1) * s for d, s in zip(dims, strides) if d > 0)
    if dtype.is_floating_point:
        flat = torch.randn(numel, device=DEVICE).to(dtype)
    elif dtype == torch.bool:
        flat = torch.randint(0, 2, (numel,), device=DEVICE).bool()
    else:
        flat = torch.randint(0, max(int(bound), 1), (numel,), device=DEVICE, dtype=dtype)
    return flat.as_strided(dims, strides)


def build(t):
    floats = [d for d, ty in zip(t["dims"], t["types"])
              if ty in DTYPES and DTYPES[ty].is_floating_point]
    bound = min([x for d in floats for x in d if x > 0] or [1])
    args = []
    for dims, ty, st, conc in zip(t["dims"], t["types"], t["strides"], t["concrete"]):
        if ty in DTYPES:
            args.append(tensor(dims, st, DTYPES[ty], bound))
        elif ty in ("Scalar", "ScalarList"):
            args.append(scalar(conc))
        elif ty == "":
            args.append(None)
        else:
            raise TypeError("cannot rebuild an input of type %r" % ty)
    return args


def fits(arg, value):
    ty = str(arg.type)
    if value is None:
        return ty.startswith("Optional")
    if isinstance(value, torch.Tensor):
        return "Tensor" in ty
    if isinstance(value, bool):
        return "bool" in ty or "number" in ty or "Scalar" in ty
    if isinstance(value, (int, float)):
        return any(k in ty for k in ("int", "float", "number", "Scalar", "SymInt"))
    if isinstance(value, list):
        return "List" in ty or "[" in ty
    return "str" in ty


def resolve(t, args):
    ns, name = t["op"].split("::", 1)
    packet = getattr(getattr(torch.ops, ns), name)
    for ov in packet.overloads():
        fn = getattr(packet, ov)
        params = fn._schema.arguments
        if len(params) != len(args) or any(p.name == "out" for p in params):
            continue
        if all(fits(p, v) for p, v in zip(params, args)):
            pos = [v for p, v in zip(params, args) if not p.kwarg_only]
            kw = {{p.name: v for p, v in zip(params, args) if p.kwarg_only}}
            return lambda: fn(*pos, **kw)
    raise TypeError("no overload of %s takes these %d inputs" % (t["op"], len(args)))


def sync():
    if DEVICE != "cpu":
        torch.cuda.synchronize()


def main():
    torch.manual_seed(0)
    calls = []
    for t in TARGETS:
        if len(calls) == LIMIT:
            print("{mark}" + json.dumps({{"index": t["index"], "status": "unused"}}), flush=True)
            continue
        try:
            call = resolve(t, build(t))
            for _ in range(WARMUP):  # lazy init, cuBLAS heuristics, caching allocator
                call()
            sync()
            calls.append((t["index"], call))
            print("{mark}" + json.dumps({{"index": t["index"], "status": "ok"}}), flush=True)
        except Exception as exc:
            msg = "%s: %s" % (type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
            status = {{"index": t["index"], "status": "error", "error": msg}}
            print("{mark}" + json.dumps(status), flush=True)
    if DEVICE == "cpu":
        return 0 if calls else 3
    outer = torch.cuda.nvtx.range_start("{range}")
    for index, call in calls:
        inner = torch.cuda.nvtx.range_start("gpuprof_target_%d" % index)
        call()
        sync()
        torch.cuda.nvtx.range_end(inner)
    torch.cuda.nvtx.range_end(outer)
    sync()
    return 0 if calls else 3


if __name__ == "__main__":
    sys.exit(main())
'''


def replay_script(targets: list[ReplayTarget], warmup: int = 3, limit: int | None = None) -> str:
    """Source of the standalone replay script: profiles the first `limit` ops that rebuild."""
    data = [
        {
            k: v
            for k, v in asdict(t).items()
            if k in ("index", "op", "dims", "types", "strides", "concrete")
        }
        for t in targets
        if not t.skip_reason
    ]
    return SCRIPT.format(
        targets=json.dumps(data),
        warmup=warmup,
        range=RANGE,
        mark=MARK,
        limit=len(data) if limit is None else limit,
    )


def replay_status(output: str) -> dict[int, str]:
    """Per-target status the script printed: '' (ran), 'unused' (a spare), or the error."""
    out: dict[int, str] = {}
    for line in output.splitlines():
        if MARK in line:
            try:
                d = json.loads(line.split(MARK, 1)[1])
            except ValueError:
                continue
            st = d.get("status")
            out[int(d["index"])] = (
                ""
                if st == "ok"
                else ("unused" if st == "unused" else str(d.get("error", "failed")))
            )
    return out


def run_replay(
    targets: list[ReplayTarget],
    workdir: str | Path,
    opts: NcuOptions | None = None,
    ncu: str | None = None,
    python: str | None = None,
    top: int | None = None,
) -> dict[str, Any]:
    """Profile the targets' replays under ncu: kernels, rules, files and per-target status."""
    opts = opts or NcuOptions()
    exe = find_ncu(ncu)
    version = ncu_version(exe)
    live = [t for t in targets if not t.skip_reason]
    if not live:
        reasons = (
            "; ".join(f"{t.op}: {t.skip_reason}" for t in targets) or "no kernels in the trace"
        )
        raise ValueError(f"nothing to replay ({reasons}); use %%ncu with an NVTX range instead")
    work = Path(workdir)
    work.mkdir(parents=True, exist_ok=True)
    limit = min(top or len(live), len(live))
    script = replay_script(targets, limit=limit)
    path = work / "replay.py"
    path.write_text(script)
    opts.nvtx_include = [RANGE]
    opts.launch_count = opts.launch_count or KERNELS_PER_OP * limit
    base = work / "replay"
    cmd = build_command(exe, opts, base, [python or sys.executable, str(path)])
    result = run_ncu(cmd, base.with_suffix(".ncu-rep"), opts, cwd=work)
    raw = export_csv(exe, result.report, "raw")
    details = export_csv(exe, result.report, "details")
    kernels = attribute_targets(frame(raw_records(raw, "replay")), [asdict(t) for t in targets])
    with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as f:
        f.write(details)
    try:
        rules = read_details_rules(f.name)
    finally:
        Path(f.name).unlink()
    status = replay_status(result.output)
    for t in live:
        st = status.get(t.index, "did not run (no status printed)")
        t.profiled = st == ""
        t.skip_reason = "" if st == "unused" else st
    return {
        "kernels": kernels,
        "rules": rules,
        "report": result.report,
        "raw": raw,
        "details": details,
        "script": script,
        "seconds": result.seconds,
        "ncu_version": ".".join(map(str, version)),
        "command": cmd,
        "targets": [asdict(t) for t in targets],
    }
