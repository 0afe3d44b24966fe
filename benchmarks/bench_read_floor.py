"""The least one trace's `analyze` can cost here with this stack, part by part (issue 25).

The read is timed in the parts no reader of a gzipped Kineto JSON trace can skip, each on its
own in one process: inflating the file (`tracefile.trace_chunks`), cutting it into pieces of
whole events (`trace_stream.split_events`), scanning the JSON (msgspec, each event kept as its
raw bytes: parsing with no Python object made), and decoding the events into the typed structs
the tables are built from (`KinetoEvent`, freed as they come; a piece the reader only counts,
`piece_skip`, is timed as its light decode, as the reader does it). Then `bench_phases.py`'s
phases in the same process: the reader itself (`build.load_trace`: the structs turned into
columns and the table), the analysis, the advice and the report.

`floor_s` adds what must be paid even if the structs became the table for free: the imports,
inflating, cutting, decoding, the analysis, the advice and the report. With `--hta-s` (the
HolisticTraceAnalysis time of the same trace, measured by `bench_analyze_vs_hta.py`), it prints
the time a speed-up of `--ratio` asks for, and whether that floor is under it. CPU seconds
beside wall seconds: on a shared machine CPU is the steadier figure.

    python benchmarks/bench_read_floor.py .bigtrace/gpt2n_40steps.pt.trace.json.gz --hta-s 38.6
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_phases import phases, timed


def _drain(parts: Any) -> int:
    """Consume an iterator of byte strings, returning how many bytes went by."""
    return sum(len(p) for p in parts)


def floor_parts(path: str) -> dict[str, Any]:
    """Every part of the read timed on its own, then the reader and the phases after it."""
    out: dict[str, Any] = {"trace": path}

    def imports() -> tuple[Any, ...]:
        import msgspec

        from jupyter_gpuprof.advice import whatif  # noqa: F401 (what `analyze` imports)
        from jupyter_gpuprof.analysis import piece_skip, trace_stream, tracefile
        from jupyter_gpuprof.analysis.kineto_json import KinetoEvent
        from jupyter_gpuprof.report import build  # noqa: F401
        return msgspec, piece_skip, trace_stream, tracefile, KinetoEvent

    msgspec, piece_skip, trace_stream, tracefile, KinetoEvent = timed(out, "imports", imports)
    src = Path(path)
    out["json_bytes"] = timed(out, "inflate", lambda: _drain(tracefile.trace_chunks(src)))
    timed(out, "inflate_split", lambda: _drain(trace_stream.split_events(
        tracefile.trace_chunks(src))))
    out["split_s"] = round(out["inflate_split_s"] - out["inflate_s"], 4)
    out["split_cpu_s"] = round(out["inflate_split_cpu_s"] - out["inflate_cpu_s"], 4)
    pieces = list(trace_stream.split_events(tracefile.trace_chunks(src)))[1:-1]

    def decoding(kind: Any, pieces: list[bytes | bytearray]) -> Callable[[], int]:
        decode = msgspec.json.Decoder(list[kind]).decode

        def run() -> int:
            n = 0
            for piece in pieces:
                skipped = piece_skip.skipped_counts(piece, False) if kind is not msgspec.Raw \
                    else None
                if skipped is not None:
                    n += skipped[0]
                    continue
                events = decode(piece)
                n += len(events)
                del events
            return n
        return run

    out["events"] = timed(out, "scan", decoding(msgspec.Raw, pieces))
    timed(out, "decode", decoding(KinetoEvent, pieces))
    pieces.clear()
    out.update({k: v for k, v in phases(path).items() if not k.startswith("imports")})
    for kind in ("", "_cpu"):
        def s(part: str, k: str = kind) -> float:
            return float(out[f"{part}{k}_s"])
        after = s("analysis") + s("advice") + s("report")
        out[f"columns{kind}_s"] = round(s("read") - s("inflate") - s("split") - s("decode"), 4)
        out[f"floor{kind}_s"] = round(s("imports") + s("inflate") + s("split") + s("decode")
                                      + after, 4)
        out[f"total{kind}_s"] = round(s("imports") + s("read") + after, 4)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--hta-s", type=float, help="HolisticTraceAnalysis's wall seconds, same trace")
    ap.add_argument("--ratio", type=float, default=15.0, help="the speed-up asked (default 15)")
    args = ap.parse_args()
    out = floor_parts(args.trace)
    if args.hta_s:
        out["target_s"] = round(args.hta_s / args.ratio, 4)
        out["floor_under_target"] = out["floor_s"] <= out["target_s"]
        out["speedup_at_floor"] = round(args.hta_s / out["floor_s"], 2)
        out["speedup_now"] = round(args.hta_s / out["total_s"], 2)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
