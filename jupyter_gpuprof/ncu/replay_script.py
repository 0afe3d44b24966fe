"""Replays recorded PyTorch ops for Nsight Compute: a standalone script (only torch needed).

`replay.run_replay` copies this file beside a JSON file of parameters and runs
`python replay.py PARAMS.json` under ncu with `--nvtx --nvtx-include <outer_range>` (a
start/end range, no trailing '/'). The run folder keeps a copy as `<session>.replay.py`, and
the session's `<session>.json` holds the same parameters under "replay", so
`python <session>.replay.py <session>.json` reruns it by hand.

Parameters: `targets` (index, op, dims, types, strides, concrete of each op call), `warmup`
(calls before the profiled one), `limit` (ops profiled; later ones are spares for ops that
fail to rebuild), `outer_range`, `target_range_prefix` and `mark` (the prefix of the status
lines the caller parses). GPUPROF_REPLAY_DEVICE=cpu checks the rebuild without a GPU.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any, NotRequired, TypedDict

import torch

DEVICE = os.environ.get("GPUPROF_REPLAY_DEVICE", "cuda")
DTYPES = {
    "float": torch.float32,
    "double": torch.float64,
    "c10::Half": torch.float16,
    "c10::BFloat16": torch.bfloat16,
    "long int": torch.int64,
    "int": torch.int32,
    "short int": torch.int16,
    "signed char": torch.int8,
    "unsigned char": torch.uint8,
    "bool": torch.bool,
}
for _name, _attr in (("c10::Float8_e4m3fn", "float8_e4m3fn"), ("c10::Float8_e5m2", "float8_e5m2")):
    if hasattr(torch, _attr):
        DTYPES[_name] = getattr(torch, _attr)


class ReplayOp(TypedDict):
    """One recorded op call to rebuild (`replay.TARGET_FIELDS` of a target)."""

    index: int
    op: str  # "aten::mm"
    dims: list[Any]  # per input: its shape, or [] for a scalar (as the trace recorded them)
    types: list[str]
    strides: list[Any]
    concrete: list[str]  # per input: a scalar's recorded text


class ReplayParams(TypedDict):
    """The script's parameters (the module docstring says what each is)."""

    targets: list[ReplayOp]
    warmup: int
    limit: int
    outer_range: str
    target_range_prefix: str
    mark: str


class StatusLine(TypedDict):
    """What the script prints of one target after `mark`."""

    index: int
    status: str  # ok | unused | error
    error: NotRequired[str]


def scalar(text: str) -> Any:
    """A recorded scalar argument ("2", "0.5", "True", "[1, 2]") back as a Python value."""
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


def tensor(dims: list[int], strides: list[int], dtype: torch.dtype, bound: float) -> torch.Tensor:
    """A random tensor with the recorded shape, strides and dtype (integers kept under `bound`)."""
    strides = strides if strides and len(strides) == len(dims) else list(torch.empty(dims).stride())
    numel = 1 + sum((d - 1) * s for d, s in zip(dims, strides, strict=False) if d > 0)
    if dtype.is_floating_point:
        flat = torch.randn(numel, device=DEVICE).to(dtype)
    elif dtype == torch.bool:
        flat = torch.randint(0, 2, (numel,), device=DEVICE).bool()
    else:
        flat = torch.randint(0, max(int(bound), 1), (numel,), device=DEVICE, dtype=dtype)
    return flat.as_strided(dims, strides)


def build(t: ReplayOp) -> list[Any]:
    """The op call's arguments rebuilt from what the trace recorded."""
    floats = [
        d
        for d, ty in zip(t["dims"], t["types"], strict=False)
        if ty in DTYPES and DTYPES[ty].is_floating_point
    ]
    # integer inputs are usually indices into a float input: keep them inside its smallest dim
    bound = min([x for d in floats for x in d if x > 0] or [1])
    args: list[Any] = []
    for dims, ty, st, conc in zip(t["dims"], t["types"], t["strides"], t["concrete"], strict=False):
        if ty in DTYPES:
            args.append(tensor(dims, st, DTYPES[ty], bound))
        elif ty in ("Scalar", "ScalarList"):
            args.append(scalar(conc))
        elif ty == "":
            args.append(None)
        else:
            raise TypeError(f"cannot rebuild an input of type {ty!r}")
    return args


def fits(arg: Any, value: Any) -> bool:
    """Whether a value can be passed for a schema argument (picks the overload)."""
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


def resolve(t: ReplayOp, args: list[Any]) -> Callable[[], Any]:
    """A no-argument call of the first overload of the op that takes these arguments."""
    ns, name = t["op"].split("::", 1)
    packet = getattr(getattr(torch.ops, ns), name)
    for ov in packet.overloads():
        fn = getattr(packet, ov)
        params = fn._schema.arguments
        if len(params) != len(args) or any(p.name == "out" for p in params):
            continue
        if all(fits(p, v) for p, v in zip(params, args, strict=True)):
            pos = [v for p, v in zip(params, args, strict=True) if not p.kwarg_only]
            kw = {p.name: v for p, v in zip(params, args, strict=True) if p.kwarg_only}
            return lambda: fn(*pos, **kw)
    raise TypeError(f"no overload of {t['op']} takes these {len(args)} inputs")


def sync() -> None:
    """Wait for the GPU, so a call's kernels finish inside its NVTX range."""
    if DEVICE != "cpu":
        torch.cuda.synchronize()


def report(mark: str, index: int, status: str, error: str = "") -> None:
    """One status line per target, which the caller parses from ncu's output."""
    line: StatusLine = {"index": index, "status": status}
    if error:
        line["error"] = error
    print(mark + json.dumps(line), flush=True)


def prepare(params: ReplayParams) -> list[tuple[int, Callable[[], Any]]]:
    """Rebuild and warm up the first `limit` targets that rebuild; report every target."""
    calls: list[tuple[int, Callable[[], Any]]] = []
    for t in params["targets"]:
        if len(calls) == params["limit"]:
            report(params["mark"], t["index"], "unused")
            continue
        try:
            call = resolve(t, build(t))
            for _ in range(params["warmup"]):  # lazy init, cuBLAS heuristics, caching allocator
                call()
            sync()
            calls.append((t["index"], call))
            report(params["mark"], t["index"], "ok")
        except Exception as exc:  # noqa: BLE001 - one op that fails to rebuild leaves its spare
            first = str(exc).splitlines()[0] if str(exc) else ""
            report(params["mark"], t["index"], "error", f"{type(exc).__name__}: {first}")
    return calls


def main(argv: list[str]) -> int:
    """Replay the targets once each inside their NVTX ranges; 3 when none rebuilt."""
    if len(argv) != 2:
        print("usage: python replay.py PARAMS.json (a replay's parameters)", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        doc = json.load(f)
    params = doc.get("replay", doc)  # the session's info file holds them under "replay"
    torch.manual_seed(0)
    calls = prepare(params)
    if DEVICE == "cpu":
        return 0 if calls else 3
    outer = torch.cuda.nvtx.range_start(params["outer_range"])
    for index, call in calls:
        inner = torch.cuda.nvtx.range_start(f"{params['target_range_prefix']}{index}")
        call()
        sync()
        torch.cuda.nvtx.range_end(inner)
    torch.cuda.nvtx.range_end(outer)
    sync()
    return 0 if calls else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
