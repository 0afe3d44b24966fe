"""Memory rules of the analysis passes (a 4 GB trace is analysed in 2.5 GB only if each holds):
a multi-category subset is not kept once used, passes copy only the columns they read, the op
nesting's table of maxima is not n·log n floats, and the whole analysis stays within a bound
of the event table on a trace scaled up."""

from __future__ import annotations

import gc
import importlib.util
import io
import tracemalloc
import weakref

import numpy as np
import pandas as pd
import pytest
from paths import ROOT

from jupyter_gpuprof.analysis import ops as ops_module
from jupyter_gpuprof.analysis import trace as trace_module
from jupyter_gpuprof.analysis.hostwork import classify_host
from jupyter_gpuprof.analysis.ops import OP_ROW_COLUMNS, _nest, op_rows
from jupyter_gpuprof.analysis.steps import step_table
from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.timeline import build_timeline, lane_specs
from jupyter_gpuprof.analysis.trace import load_trace

SRC = ROOT / "tests" / "data" / "real" / "llama_bf16" / "trace.json.gz"
#: columns only GPU rows carry: an op call copying them copies -1s and empty texts
GPU_ONLY = {"device", "stream", "bytes", "grid", "block", "occupancy_pct"}


@pytest.fixture(scope="module")
def trace():
    return load_trace(SRC)


def test_a_multi_category_subset_is_held_only_while_an_analysis_holds_it(trace):
    sub = trace.of("user_annotation", "cpu_op")
    assert trace.of("user_annotation", "cpu_op") is sub  # shared while held
    ref = weakref.ref(sub)
    del sub
    gc.collect()
    assert ref() is None
    # what the trace keeps is the rows' order: one integer a row
    assert sum(rows.nbytes for rows in trace._rows.values()) <= 8 * 3 * len(trace.events)


def test_a_column_subset_is_those_columns_of_the_same_rows(trace):
    cols = ["name", "ts_us", "tid"]
    narrow = trace.of("cpu_op", "cuda_runtime", columns=cols)
    assert list(narrow.columns) == cols
    pd.testing.assert_frame_equal(narrow, trace.of("cpu_op", "cuda_runtime")[cols])
    one = trace.of("cpu_op", columns=["ts_us"])
    assert list(one.columns) == ["ts_us"]
    assert np.shares_memory(one["ts_us"].to_numpy(), trace.events["ts_us"].to_numpy())


def test_op_calls_keep_only_the_columns_the_tables_read(trace):
    calls = op_rows(trace)
    assert not GPU_ONLY & set(calls.columns)
    assert set(calls.columns) == set(OP_ROW_COLUMNS) | {
        "parent", "cpu_self_us", "cuda_self_us", "cuda_total_us", "wrapper", "autograd"}


def test_no_pass_copies_every_column_of_the_host_rows(trace, monkeypatch):
    """The op and annotation rows are most of a trace: every pass over several categories that
    include them names the columns it reads (`Trace.of(..., columns=)`)."""
    asked = []
    of = trace_module.Trace.of

    def spy(self, *cats, columns=None):
        asked.append((cats, columns))
        return of(self, *cats, columns=columns)

    monkeypatch.setattr(trace_module.Trace, "of", spy)
    a = analyze(trace)
    build_timeline(trace, a.window, a.gaps, a.steps)
    host = [(c, cols) for c, cols in asked if len(c) > 1 and "cpu_op" in c]
    assert host and all(cols is not None for _, cols in host), host


def _parents_by_walk(ts, end, thread):
    """Each op's parent walked back op by op: the nearest earlier op of its thread (by start,
    longest first) whose end reaches its own (less the rounding slack)."""
    order = np.lexsort((-end, ts, thread))
    parent = np.full(len(ts), -1)
    for k, i in enumerate(order):
        for j in order[k - 1::-1] if k else []:
            if thread[j] != thread[i]:
                break
            if end[j] >= end[i] - 1e-3:
                parent[i] = j
                break
    return parent


def test_op_nesting_finds_the_parents_a_walk_finds():
    rng = np.random.default_rng(7)
    n = 1500
    ts = np.round(rng.uniform(0, 5e3, n), 1)
    ts[rng.integers(0, n, 50)] = ts[0]  # ties on start
    end = ts + np.round(rng.exponential(40.0, n), 1)
    thread = rng.integers(0, 3, n)
    ops = pd.DataFrame({"ts_us": ts, "end_us": end, "pid": np.ones(n, np.int64), "tid": thread})
    assert (_nest(ops) == _parents_by_walk(ts, end, thread)).all()


def test_op_nesting_keeps_few_levels_of_its_table():
    """The search's table of maxima has log2(n) levels of n floats (17 at 2**16 ops); one in
    `_KEPT_LEVELS` is kept and the rest rebuilt when reached, so the peak stays below 17."""
    n = 1 << 16
    rng = np.random.default_rng(0)
    ts = np.sort(rng.uniform(0, 1e6, n))
    ops = pd.DataFrame({"ts_us": ts, "end_us": ts + rng.exponential(50.0, n),
                        "pid": np.ones(n, np.int64), "tid": rng.integers(0, 3, n)})
    gc.collect()
    tracemalloc.start()
    try:
        _nest(ops)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 17 * 8 * n, peak / n
    assert ops_module._KEPT_LEVELS > 1


@pytest.mark.parametrize(("pass_", "bound"), [("classify_host", 1.5), ("lane_specs", 1.8)])
def test_host_passes_copy_less_than_the_host_rows(pass_, bound):
    """The host classes and the timeline's lanes read four to nine columns of the host rows
    (annotations, ops, runtime and driver calls): at their peak they hold less than `bound`
    full-width copies of those rows (2.4–2.6 before: the subset, its pid filter, its
    concatenation or groups, each with every column)."""
    fresh = load_trace(SRC)
    _, window = step_table(fresh)
    ev = fresh.events
    host_rows = ev["cat"].isin(["user_annotation", "cpu_op", "cuda_runtime", "cuda_driver"])
    full_width = ev.memory_usage(index=False).sum() / len(ev) * int(host_rows.sum())
    run = {"classify_host": lambda: classify_host(fresh, window.pid),
           "lane_specs": lambda: lane_specs(fresh, window)}[pass_]
    gc.collect()
    tracemalloc.start()
    try:
        run()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < bound * full_width, peak / full_width


def test_the_analysis_of_a_longer_trace_stays_within_twice_its_table(tmp_path):
    """Three repetitions of a real trace (`benchmarks/make_scaled_trace.py`): what the analysis
    allocates at its peak, over the event table's own size, stays under 2.6 (3.6 before the
    passes copied only what they read), and the timeline's under 3.2 (4.0 before)."""
    spec = importlib.util.spec_from_file_location(
        "make_scaled_trace", ROOT / "benchmarks" / "make_scaled_trace.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    out = io.BytesIO()
    gen.write(SRC, out, 3)
    path = tmp_path / "x3.json"
    path.write_bytes(out.getvalue())
    del out
    big = load_trace(path)
    table = big.events.memory_usage(index=False).sum()
    gc.collect()
    tracemalloc.start()
    try:
        a = analyze(big)
        analysis_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        build_timeline(big, a.window, a.gaps, a.steps)
        timeline_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert analysis_peak < 2.6 * table, analysis_peak / table
    assert timeline_peak < 3.2 * table, timeline_peak / table
