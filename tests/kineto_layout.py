"""Trace documents laid out as the profiler writes them, for the streamed reader's tests."""

from __future__ import annotations

import json

from tracebuilder import TraceBuilder

#: names a cut inside a string would break: braces, commas and an escaped newline
TRICKY = ['mm},{"x', "a},\\n{b", "}", "{[", 'q"},\n{'.replace("\n", "\\n")]


def kineto_layout(doc: dict) -> bytes:
    """The document as the profiler writes it: header fields, then one indented event per
    block, `},` and a newline between them."""
    head = {k: v for k, v in doc.items() if k != "traceEvents"}
    lines = ["{"] + [f'  "{k}": {json.dumps(v)},' for k, v in head.items()]
    events = ",\n".join("  {\n    " + json.dumps(e)[1:-1] + "\n  }" for e in doc["traceEvents"])
    return ("\n".join(lines) + '\n  "traceEvents": [\n' + events
            + '\n  ],\n  "traceName": "t.json"\n}').encode()


def trace_doc() -> dict:
    b = TraceBuilder()
    for i in range(4):
        t0 = 1000.0 + 200.0 * i
        b.step(i + 1, t0, 150.0)
        for j, name in enumerate(TRICKY):
            ext = b.op(name, t0 + 10 + j * 20, 15.0, dims=[[2, 3]], types=["float"])
            b.kernel(f"k{name}", t0 + 12 + j * 20, t0 + 30 + j * 20, 10.0, ext=ext)
    return b.doc()
