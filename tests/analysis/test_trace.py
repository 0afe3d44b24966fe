"""The Kineto parser: columns, unknown kinds skipped, one-line errors for bad files."""

import gzip
import json

import pytest
from tracebuilder import TraceBuilder

from jupyter_gpuprof.analysis.trace import TraceError, load_trace


def test_columns_links_and_relative_time(tmp_path):
    b = TraceBuilder()
    b.step(1, 1000.0, 100.0)
    ext = b.op("aten::mm", 1010.0, 20.0, dims=[[2, 3], [3, 4]], types=["float", "float"])
    b.kernel("sgemm", 1020.0, 1050.0, 30.0, ext=ext)
    t = load_trace(b.write(tmp_path / "t.json.gz"))
    ev = t.events
    assert t.info.t0_us == 1000.0 and t.info.gpu_name == "NVIDIA H200"
    op = ev[ev["cat"] == "cpu_op"].iloc[0]
    k = ev[ev["cat"] == "kernel"].iloc[0]
    assert (op["ts_us"], op["end_us"]) == (10.0, 30.0)
    assert op["input_dims"] == "[[2, 3], [3, 4]]" and '"float"' in op["input_types"]
    assert k["external_id"] == ext and k["stream"] == 7 and k["ts_us"] == 50.0
    assert t.has_gpu


def test_unknown_event_kinds_and_odd_fields_are_skipped(tmp_path):
    b = TraceBuilder()
    b.step(1, 0.0, 10.0)
    for i in range(5):  # enough valid events that one broken op stays under the refusal share
        b.annotation(f"a{i}", 1.0 + i, 1.0)
    doc = b.doc()
    doc["traceEvents"] += [
        {"ph": "X", "cat": "some_future_kind", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
        {"ph": "C", "name": "counter", "pid": 1, "ts": 2, "args": {"v": 3}},
        {"ph": "X", "cat": "cpu_op", "name": "weird", "pid": "str-pid", "tid": 1, "ts": 3,
         "dur": "not-a-number"},
    ]
    p = tmp_path / "t.json"
    p.write_text(json.dumps(doc))
    t = load_trace(p)
    assert set(t.events["cat"]) == {"user_annotation"}
    # the unknown kind and the counter are skipped silently; the broken cpu_op is a loss
    assert t.info.n_events_skipped == 3 and t.info.n_events_dropped == 1
    assert t.info.warnings == ["1 event dropped: `dur` of the wrong type"]


@pytest.mark.parametrize("content,needle", [
    (gzip.compress(b'{"traceEvents": [')[:-4], "truncated or corrupt gzip"),
    (b'{"traceEvents": [{"ph": "X"', "truncated or corrupt"),
    (b"[1, 2, 3]", "not a Kineto/Chrome trace"),
])
def test_corrupt_files_give_one_line_errors_naming_the_file(tmp_path, content, needle):
    p = tmp_path / "bad.json.gz"
    p.write_bytes(content)
    with pytest.raises(TraceError) as err:
        load_trace(p)
    msg = str(err.value)
    assert str(p) in msg and needle in msg and "\n" not in msg


def test_missing_file(tmp_path):
    with pytest.raises(TraceError, match="no such trace file"):
        load_trace(tmp_path / "nope.json")


def test_distributed_info_gives_rank(tmp_path):
    b = TraceBuilder()
    b.step(1, 0.0, 10.0)
    t = load_trace(b.write(tmp_path / "r.json.gz", distributedInfo={"rank": 3, "world_size": 8}))
    assert (t.info.rank, t.info.world_size) == (3, 8)



def test_plain_zlib_is_used_without_the_optional_isal(tmp_path, monkeypatch):
    import sys

    from jupyter_gpuprof.analysis.tracefile import read_trace_bytes

    monkeypatch.setitem(sys.modules, "isal", None)  # as if not installed
    p = tmp_path / "t.json.gz"
    p.write_bytes(gzip.compress(b'{"traceEvents": []}'))
    assert read_trace_bytes(p) == b'{"traceEvents": []}'
    p.write_bytes(gzip.compress(b'{"traceEvents": []}')[:-6])
    with pytest.raises(TraceError, match="truncated or corrupt gzip"):
        read_trace_bytes(p)
