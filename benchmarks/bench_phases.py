"""Where one trace's analysis goes, phase by phase, and the what-if's share of it (issue 25).

One process: imports, reading the trace, the analysis (`analysis.summary.analyze`), the advice
(`advice.passes.finish`, which runs the what-if), the report and its text; then the what-if's
seven fix predictions again on their own (`advice.whatif.predictions_for`, the graph's memo
cleared) to price it. Prints one JSON line: seconds per phase (wall and CPU) and
`whatif_share` (and `whatif_cpu_share`), the what-if's time over everything after the trace is
read (target ≤ 10 %).

    python benchmarks/bench_phases.py .bigtrace/gpt2_52steps.pt.trace.json.gz
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any


def timed(out: dict[str, Any], name: str, work: Callable[[], Any]) -> Any:
    """Run `work`, recording its wall and CPU seconds under `name`."""
    w, c = time.perf_counter(), time.process_time()
    result = work()
    out[f"{name}_s"] = round(time.perf_counter() - w, 4)
    out[f"{name}_cpu_s"] = round(time.process_time() - c, 4)
    return result


def phases(trace_path: str) -> dict[str, Any]:
    """Every phase of `jupyter gpuprof analyze TRACE` timed, and the what-if on its own."""
    out: dict[str, Any] = {"trace": trace_path}

    def imports() -> tuple[Any, ...]:
        from jupyter_gpuprof.advice import whatif
        from jupyter_gpuprof.report import build
        return build, whatif

    build, whatif = timed(out, "imports", imports)
    trace = timed(out, "read", lambda: build.load_trace(trace_path))
    a = timed(out, "analysis", lambda: build.analyze(trace))
    advice = timed(out, "advice", lambda: build.finish(build._context(a, None)))
    timed(out, "report", lambda: build.Report(a, advice, None, trace_path,
                                              timeline=build._timeline(trace, a)).to_text())
    if a.graph is not None:
        a.graph.memo.clear()
    timed(out, "whatif", lambda: whatif.predictions_for(a))
    for kind in ("", "_cpu"):  # wall and CPU: on a shared machine CPU is the steadier one
        after_read = sum(out[f"{p}{kind}_s"] for p in ("analysis", "advice", "report"))
        out[f"whatif{kind}_share"] = (round(out[f"whatif{kind}_s"] / after_read, 4)
                                      if after_read > 0 else None)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(json.dumps(phases(sys.argv[1])))
