"""The trace reader under generated hostile input: a table or its one-line `TraceError`, never
another exception (hypothesis; bounded to a few seconds in the normal test run)."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paths import TESTS

from jupyter_gpuprof.analysis.summary import analyze
from jupyter_gpuprof.analysis.trace import Trace, TraceError, load_trace

#: small enough that the three properties together stay within a few seconds
FUZZ = settings(max_examples=120, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SMALL_REAL = TESTS / "data" / "wild" / "hta" / "tiny_triton" / "triton_example.json.gz"
CATS = ["kernel", "cpu_op", "user_annotation", "gpu_memcpy", "gpu_memset", "cuda_runtime",
        "gpu_user_annotation", "Kernel", "Operator", "python_function", "x"]

_scalars = st.one_of(
    st.none(), st.booleans(), st.text(max_size=8),
    st.integers(min_value=-(2**70), max_value=2**70), st.sampled_from([2**63, 2**64, -(2**63) - 1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["\x1b[2J", "0x1f", "0xffffffffffffffffffffff", "123", "x", "ProfilerStep#3"]),
)
_json = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=8)
_time = st.one_of(st.floats(min_value=-1e6, max_value=1e7, allow_nan=False), st.integers(-5, 10**7),
                  _scalars)
_args = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "External id": _scalars, "correlation": _scalars, "stream": _scalars, "device": _scalars,
    "bytes": _scalars, "Bytes": _scalars, "Total Allocated": _scalars, "Device Type": _scalars,
    "Device Id": _scalars, "Input Dims": _json, "grid": _json, "name": _json}))
_event = st.fixed_dictionaries({}, optional={
    "ph": st.sampled_from(["X", "i", "M", "B", 5]),
    "cat": st.one_of(st.sampled_from(CATS), _scalars),
    "name": st.one_of(st.sampled_from(["ProfilerStep#1", "ProfilerStep#2", "[memory]",
                                       "thread_name", "k", "aten::mm"]), _scalars),
    "pid": _scalars, "tid": _scalars, "ts": _time, "dur": _time, "args": _args})
_device = st.one_of(_json, st.fixed_dictionaries({}, optional={
    "id": _scalars, "name": _scalars, "totalGlobalMem": _scalars, "computeMajor": _scalars,
    "computeMinor": _scalars, "warpSize": _scalars}))
_document = st.one_of(
    st.fixed_dictionaries({"traceEvents": st.one_of(st.lists(_event, max_size=12), _json)},
                          optional={"deviceProperties": st.one_of(st.lists(_device, max_size=2),
                                                                  _json),
                                    "distributedInfo": st.one_of(st.dictionaries(
                                        st.sampled_from(["rank", "world_size"]), _scalars), _json),
                                    "schemaVersion": _scalars}),
    st.lists(_event, max_size=12),  # the bare-array form
    _json)
_HOSTILE = st.one_of(_scalars, st.sampled_from([2**63, 2**64 + 1, -(2**63) - 1, 10**30, 0, -1,
                                                 1e300, -1e12, "18446744073709551616"]))
_FIELDS = ["ph", "cat", "name", "pid", "tid", "ts", "dur", "args"]
_ARG_FIELDS = ["External id", "correlation", "stream", "device", "bytes", "Input Dims", "grid"]


@st.composite
def _sound_then_broken(draw: st.DrawFn) -> dict[str, Any]:
    """A sound little trace (steps, ops, launches, kernels) with a few fields made hostile,
    events duplicated or clocks stopped: the shapes a real file breaks in."""
    events: list[dict[str, Any]] = []
    for i in range(draw(st.integers(1, 4))):
        t = 1000.0 * i
        events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{i}",
                       "pid": 1, "tid": 1, "ts": t, "dur": 900.0, "args": {}})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                       "ts": t + 10, "dur": 50.0, "args": {"External id": i + 1,
                                                           "Input Dims": [[4, 4], [4, 4]]}})
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": t + 20, "dur": 5.0, "args": {"correlation": i + 1}})
        events.append({"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7,
                       "ts": t + 30, "dur": 400.0, "args": {"correlation": i + 1, "device": 0,
                                                            "stream": 7, "grid": [1, 1, 1]}})
        events.append({"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
                       "tid": 1, "ts": t + 15, "s": "t", "args": {
                           "Device Type": 1, "Device Id": 0, "Bytes": 1024,
                           "Total Allocated": 1024 * (i + 1)}})
    for _ in range(draw(st.integers(0, 3))):
        e = draw(st.sampled_from(events))
        if draw(st.booleans()):
            e[draw(st.sampled_from(_FIELDS))] = draw(_HOSTILE)
        elif isinstance(e.get("args"), dict):
            e["args"][draw(st.sampled_from(_ARG_FIELDS))] = draw(_HOSTILE)
    how = draw(st.sampled_from(["as is", "twice", "one clock", "backwards", "shifted"]))
    if how == "twice":
        events = events + [dict(e) for e in events]
    for e in events:
        if how == "one clock":
            e["ts"] = 0
        elif how in ("backwards", "shifted") and isinstance(e.get("ts"), (int, float)):
            e["ts"] = -e["ts"] if how == "backwards" else e["ts"] - 1e9
    doc: dict[str, Any] = {"traceEvents": events}
    if draw(st.booleans()):
        doc["deviceProperties"] = [draw(_device)]
    if draw(st.booleans()):
        doc["distributedInfo"] = {"rank": draw(_HOSTILE), "world_size": draw(_HOSTILE)}
    return doc


def _read(data: bytes) -> Trace | None:
    """`load_trace` on these bytes: the table, or None for its one-line TraceError."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.json"
        path.write_bytes(data)
        try:
            return load_trace(path)
        except TraceError as e:
            text = str(e)
            assert text and "\n" not in text and str(path) in text
            return None


@FUZZ
@given(_document)
def test_generated_kineto_documents_give_a_table_or_a_trace_error(doc: Any) -> None:
    trace = _read(json.dumps(doc).encode())
    if trace is not None:
        assert trace.events["ts_us"].notna().all() and (trace.events["dur_us"] >= 0).all()


@settings(FUZZ, max_examples=40)  # each example analyses its trace too: 40 fit in seconds
@given(_sound_then_broken())
def test_sound_traces_with_broken_fields_are_analysed_or_refused_in_one_line(doc: Any) -> None:
    trace = _read(json.dumps(doc).encode())
    if trace is not None:  # what the reader lets through, every analysis can take
        analyze(trace)


_REAL = gzip.decompress(SMALL_REAL.read_bytes())


@FUZZ
@given(st.data())
def test_mutated_real_trace_bytes_give_a_table_or_a_trace_error(data: st.DataObject) -> None:
    raw = bytearray(_REAL)
    for _ in range(data.draw(st.integers(1, 4))):
        if not raw:  # cut or dropped to nothing: the smallest malformed document
            raw.extend(b"{")
        at = data.draw(st.integers(0, len(raw) - 1))
        how = data.draw(st.sampled_from(["flip", "cut", "insert", "drop"]))
        if how == "flip":
            raw[at] = data.draw(st.sampled_from(b'{}[]",:0123456789-e.\x1b\x00'))
        elif how == "cut":
            del raw[at:]
        elif how == "insert":
            raw[at:at] = data.draw(st.sampled_from([b"[" * 5000, b"{", b'"', b",", b"1e400",
                                                   b"18446744073709551616", b"NaN", b"\xff\xfe"]))
        else:
            del raw[at:at + data.draw(st.integers(1, 64))]
    _read(bytes(raw))


@FUZZ
@given(st.integers(1, 50_000), st.sampled_from(["args", "deviceProperties", "event"]))
def test_nesting_of_any_depth_reads_or_is_one_line(depth: int, where: str) -> None:
    deep = "[" * depth + "]" * depth
    doc = json.loads(gzip.decompress(SMALL_REAL.read_bytes()))
    text = json.dumps(doc)
    if where == "args":
        text = text.replace('"args": {', f'"args": {{"deep": {deep}, ', 1)
    elif where == "deviceProperties":
        text = text.replace('"deviceProperties": [', f'"deviceProperties": [{{"x": {deep}}}, ', 1)
    else:
        text = text.replace('"traceEvents": [', f'"traceEvents": [{deep}, ', 1)
    _read(text.encode())


def test_malformed_json_after_a_wrongly_typed_event_is_one_line() -> None:
    """The typed pass stops at the first event that is no object (a ValidationError) before it
    reaches the malformed bytes after it; the tolerant pass then meets them (found by the
    mutation test above: 5,000 `[` inserted into a real trace)."""
    assert _read(b'{"traceEvents": [[' + b"[" * 50 + b'1, "x": }') is None
    assert _read(b'{"traceEvents": [7, {"ph": "X", "cat": "kernel", ') is None
