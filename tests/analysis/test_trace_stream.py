"""The streamed reader: pieces cut only between events (braces in strings do not fool it), the
same table as reading the file whole, and the whole-file errors for broken files."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from kineto_layout import TRICKY, kineto_layout
from kineto_layout import trace_doc as _trace_doc
from pandas.testing import assert_frame_equal

from jupyter_gpuprof.analysis import piece_pool, trace, trace_stream, tracefile
from jupyter_gpuprof.analysis.trace import TraceError, load_trace


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(tracefile, "CHUNK", 7)  # a cut in every event, most mid-string


@pytest.fixture(params=[1, 2], ids=["here", "workers"])
def decode_workers(request, monkeypatch):
    """Pieces decoded in this process, or by two worker processes from the first piece on."""
    monkeypatch.setenv(piece_pool.WORKERS_ENV, str(request.param))
    monkeypatch.setattr(piece_pool, "SERIAL_PIECES", 0)
    return request.param


def _whole(path: Path) -> trace.Trace:
    return trace._load_whole(path, keep_python=False)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("chunk", [1, 7, 4096, 8 << 20])
def test_streamed_table_is_the_whole_files_table(tmp_path, monkeypatch, decode_workers, gz,
                                                 chunk):
    monkeypatch.setattr(tracefile, "CHUNK", chunk)
    data = kineto_layout(_trace_doc())
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    pieces = list(trace_stream.split_events(tracefile.trace_chunks(path)))
    if chunk <= 7:
        assert len(pieces) > 20  # it streamed: many pieces, none of them cut inside a name
    streamed = trace._load_streamed(path, tracefile.Prefetch(path).chunks(), False)
    whole = _whole(path)
    assert_frame_equal(streamed.events, whole.events, check_exact=True)
    assert list(streamed.events["name"].cat.categories) == list(
        whole.events["name"].cat.categories)
    assert set(TRICKY) <= set(streamed.events["name"].astype(str))
    assert streamed.info == whole.info


def test_a_boundary_inside_an_event_is_caught_and_the_file_read_whole(tmp_path, small_chunks,
                                                                     decode_workers):
    """Another writer's layout, `},` and a newline inside an event's args: the piece does not
    decode as events, so the file is read whole (same result)."""
    doc = _trace_doc()
    for e in doc["traceEvents"]:
        e["args"] = {"nested": {"a": 1}, **e.get("args", {})}
    text = kineto_layout(doc).replace(b'{"a": 1},', b'{"a": 1},\n')
    path = tmp_path / "t.json"
    path.write_bytes(text)
    with pytest.raises(trace_stream.NotStreamable):
        trace._load_streamed(path, tracefile.Prefetch(path).chunks(), False)
    assert_frame_equal(load_trace(path).events, _whole(path).events, check_exact=True)


def test_truncated_file_gives_the_whole_file_error(tmp_path, small_chunks):
    data = kineto_layout(_trace_doc())
    path = tmp_path / "t.json"
    path.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(TraceError) as streamed:
        load_trace(path)
    assert "\n" not in str(streamed.value) and str(path) in str(streamed.value)


def test_truncated_gzip_is_a_one_line_error(tmp_path, small_chunks):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(kineto_layout(_trace_doc()))[:-40])
    with pytest.raises(TraceError, match="truncated or corrupt gzip"):
        load_trace(path)


@pytest.mark.parametrize("chunk", [7, 1 << 20])  # many pieces; the whole file as the tail
def test_too_many_events_stops_the_stream(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(tracefile, "CHUNK", chunk)
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(_trace_doc()))
    monkeypatch.setattr(trace, "MAX_EVENTS", 10)
    with pytest.raises(TraceError, match="events, more than the 10 a trace may hold"):
        load_trace(path)


def test_header_fields_after_the_events_are_read(tmp_path, small_chunks):
    doc = _trace_doc()
    props = doc.pop("deviceProperties")
    text = kineto_layout(doc).replace(
        b'"traceName"', b'"deviceProperties": ' + json.dumps(props).encode() + b',\n  "traceName"')
    path = tmp_path / "t.json"
    path.write_bytes(text)
    assert load_trace(path).info.gpu_name == "NVIDIA H200"


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_decoded_pieces_come_back_each_once_in_file_order(monkeypatch, workers):
    """Every piece's columns, none dropped, repeated or swapped, whichever process decoded
    them (each piece's single event is named after its position)."""
    monkeypatch.setattr(piece_pool, "SERIAL_PIECES", 2)
    pieces = [b'[{"ph": "X", "cat": "cpu_op", "name": "op%d", "pid": 1, "tid": 1, "ts": %d, '
              b'"dur": 1}]' % (i, i) for i in range(23)]
    got = list(piece_pool.decoded_pieces(iter(pieces), False, workers=workers))
    assert [p.names for p in got] == [[f"op{i}"] for i in range(23)]
    assert [float(p.events["ts"][0]) for p in got] == list(range(23))


def test_a_piece_a_worker_cannot_decode_stops_the_stream(monkeypatch):
    monkeypatch.setattr(piece_pool, "SERIAL_PIECES", 0)
    pieces = [b'[{"ph": "X", "cat": "cpu_op", "name": "a"}]', b'[{"ph": "X", ']
    with pytest.raises(trace_stream.NotStreamable):
        list(piece_pool.decoded_pieces(iter(pieces), False, workers=2))


def test_a_trace_of_allocator_instants_only_streams_to_the_whole_files_tables(tmp_path,
                                                                             small_chunks):
    """No event of the table's kinds: an empty event table of the same columns and dtypes."""
    mems = [{"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1,
             "ts": 100.0 + i, "s": "t", "args": {"Device Type": 1, "Device Id": 0,
                                                 "Bytes": 512, "Total Allocated": 512 * i}}
            for i in range(1, 30)]
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout({"schemaVersion": 1, "traceEvents": mems}))
    streamed = trace._load_streamed(path, tracefile.Prefetch(path).chunks(), False)
    whole = _whole(path)
    assert len(streamed.memory) == 29 and len(streamed.events) == 0
    assert_frame_equal(streamed.events, whole.events, check_exact=True)
    assert_frame_equal(streamed.memory, whole.memory, check_exact=True)


@pytest.mark.parametrize(("cores", "env", "workers"), [
    (1, "", 1), (2, "", 1), (3, "", 2), (16, "", 8), (64, "", 8), (2, "2", 2), (16, "1", 1),
    (16, "many", 8)])
def test_decoding_workers_leave_a_core_to_the_reader(monkeypatch, cores, env, workers):
    monkeypatch.setattr(piece_pool.os, "sched_getaffinity", lambda _: set(range(cores)),
                        raising=False)
    monkeypatch.setattr(piece_pool.threading, "active_count", lambda: 1)
    monkeypatch.setenv(piece_pool.WORKERS_ENV, env)
    assert piece_pool.decode_workers() == workers


@pytest.mark.parametrize(("env", "workers"), [("", 1), ("4", 4)])
def test_no_fork_beside_other_threads_unless_asked(monkeypatch, env, workers):
    """A kernel or the server runs other threads: a forked child would inherit their held
    locks, so the pieces are decoded in-process there unless the variable asks for workers."""
    monkeypatch.setattr(piece_pool.os, "sched_getaffinity", lambda _: set(range(16)),
                        raising=False)
    monkeypatch.setattr(piece_pool.threading, "active_count", lambda: 3)
    monkeypatch.setenv(piece_pool.WORKERS_ENV, env)
    assert piece_pool.decode_workers() == workers
