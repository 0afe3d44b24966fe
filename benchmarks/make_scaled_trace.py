"""A longer Kineto trace from a real one: its profiled steps repeated N times, as one run.

    python benchmarks/make_scaled_trace.py SRC OUT --repeat N

Each repetition is shifted in time past the one before, and its correlation ids, External ids,
flow ids and ProfilerStep numbers past the source's, so kernels still link to their launches
and steps stay in order; thread names and other metadata are written once. Streamed: the source
is read piece by piece (twice: once to measure its span and ids, then once per repetition) and
the output written as it goes, in the profiler's layout; `OUT` ending in `.gz` is gzipped. A
305 MB trace repeated 5 times makes the 1.31 GB benchmark trace, 16 times the 4.2 GB one
(the copies are compact: `bench_scale.py --sizes` picks the count).
"""

from __future__ import annotations

import argparse
import gzip
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_gpuprof.analysis.trace_stream import split_events  # noqa: E402
from jupyter_gpuprof.analysis.tracefile import trace_chunks  # noqa: E402

#: the source may be larger than the analysis's cap on one trace
NO_CAP = 1 << 40
#: args that link events to each other, shifted per repetition (the flow's own `id` too)
ID_ARGS = ("External id", "external id", "correlation", "Record function id")
STEP = re.compile(r"^ProfilerStep#(\d+)$")


def source_events(src: Path) -> tuple[dict[str, Any], Iterator[list[dict[str, Any]]]]:
    """The source's header fields and its events, a piece at a time (the trailer's fields
    are in the last piece's `None` key)."""
    pieces = split_events(trace_chunks(src, NO_CAP))
    header = msgspec.json.decode(bytes(next(pieces)) + b"]}")
    header.pop("traceEvents", None)

    def events() -> Iterator[list[dict[str, Any]]]:
        held = None
        for piece in pieces:
            if held is not None:
                yield msgspec.json.decode(held)
            held = piece
        tail = msgspec.json.decode(b'{"traceEvents":[' + bytes(held or b""))
        yield tail.pop("traceEvents")
        header.update({f"trailer:{k}": v for k, v in tail.items()})

    return header, events()


def measure(src: Path) -> dict[str, float]:
    """The source's time span (µs), largest ids and step numbers: what each repetition adds."""
    _, pieces = source_events(src)
    lo, hi, top_id, steps = float("inf"), float("-inf"), 0, []
    for events in pieces:
        for e in events:
            ts = e.get("ts")
            if e.get("ph") == "M" or not isinstance(ts, (int, float)):
                continue
            lo = min(lo, ts)
            hi = max(hi, ts + (e.get("dur") or 0))
            args = e.get("args") or {}
            top_id = max([top_id, *(v for k in ID_ARGS if isinstance(v := args.get(k), int))])
            if isinstance(e.get("id"), int):
                top_id = max(top_id, e["id"])
            if m := STEP.match(str(e.get("name", ""))):
                steps.append(int(m.group(1)))
    return {"span": hi - lo + 1.0, "id_step": top_id + 1,
            "step_step": (max(steps) - min(steps) + 1) if steps else 0}


def shifted(e: dict[str, Any], rep: int, m: dict[str, float]) -> dict[str, Any]:
    """One event moved to repetition `rep`."""
    if rep == 0:
        return e
    if isinstance(e.get("ts"), (int, float)):
        e["ts"] = round(e["ts"] + rep * m["span"], 3)
    if isinstance(e.get("id"), int):
        e["id"] += rep * int(m["id_step"])
    args = e.get("args")
    if isinstance(args, dict):
        for k in ID_ARGS:
            if isinstance(args.get(k), int) and args[k] >= 0:
                args[k] += rep * int(m["id_step"])
    if m["step_step"] and (s := STEP.match(str(e.get("name", "")))):
        e["name"] = f"ProfilerStep#{int(s.group(1)) + rep * int(m['step_step'])}"
    return e


def write(src: Path, out: BinaryIO, repeat: int) -> int:
    """The scaled trace into `out`; how many events it holds."""
    m = measure(src)
    header, _ = source_events(src)
    encode = msgspec.json.Encoder().encode
    out.write(b"{\n" + b"".join(b'  "' + k.encode() + b'": ' + encode(v) + b",\n"
                                for k, v in header.items()) + b'  "traceEvents": [\n')
    n, trailer = 0, {}
    for rep in range(repeat):
        hdr, pieces = source_events(src)
        for events in pieces:
            for e in events:
                if rep and e.get("ph") == "M":
                    continue  # thread names and sort order: once
                out.write((b",\n" if n else b"") + b"  {\n    " + encode(shifted(e, rep, m))[1:-1]
                          + b"\n  }")
                n += 1
        trailer = {k.removeprefix("trailer:"): v for k, v in hdr.items()
                   if k.startswith("trailer:")}
    out.write(b"\n  ]" + b"".join(b',\n  "' + k.encode() + b'": ' + encode(v)
                                  for k, v in trailer.items()) + b"\n}\n")
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("src", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--repeat", type=int, default=4, help="how many times the steps repeat")
    args = ap.parse_args()
    if args.repeat < 1:
        sys.exit("--repeat must be at least 1")
    opener = (lambda p: gzip.open(p, "wb", compresslevel=1)) if args.out.suffix == ".gz" else (
        lambda p: open(p, "wb", buffering=8 << 20))
    with opener(args.out) as f:
        n = write(args.src, f, args.repeat)
    print(f"{n:,} events, {args.out.stat().st_size / 1e6:,.0f} MB -> {args.out}")


if __name__ == "__main__":
    main()
