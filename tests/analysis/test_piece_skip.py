"""Pieces of events the tables skip (a block of Python function calls, flow arrows) are only
counted, in a light decode: the same tables and counts as the full decode, the same refusal of
a malformed byte, and any event the tables read sends its piece to the full decode."""

from __future__ import annotations

import json

import pytest
from kineto_layout import kineto_layout
from kineto_layout import trace_doc as _trace_doc
from pandas.testing import assert_frame_equal

from jupyter_gpuprof.analysis import piece_skip, trace, trace_stream, tracefile
from jupyter_gpuprof.analysis.piece_columns import decode_piece_columns, piece_columns
from jupyter_gpuprof.analysis.trace import TraceError


def _python(i: int) -> dict:
    return {"ph": "X", "cat": "python_function", "name": f"train.py({i}): step", "pid": 1,
            "tid": 1, "ts": 1000.0 + i, "dur": 0.5,
            "args": {"Python parent id": None, "Python id": i, "Ev Idx": i}}


def _flow(i: int) -> dict:
    return {"ph": "s", "id": i, "pid": 1, "tid": 1, "ts": 1000.0 + i, "cat": "ac2g",
            "name": "ac2g"}


def _piece(events: list[dict]) -> bytes:
    return ("[" + ",\n".join("  {\n    " + json.dumps(e)[1:-1] + "\n  }" for e in events)
            + "]").encode()


def _same(a, b) -> None:
    assert (a.n_total, a.held, a.thread_names, a.names, a.texts) == (
        b.n_total, b.held, b.thread_names, b.names, b.texts)
    assert a.events.keys() == b.events.keys() and a.memory.keys() == b.memory.keys()
    for k in a.events:
        assert (a.events[k] == b.events[k]).all()
    for k in a.memory:
        assert (a.memory[k] == b.memory[k]).all()


def test_a_piece_of_skipped_events_is_counted_without_the_full_decode():
    events = [_python(i) if i % 3 else _flow(i) for i in range(40)]
    events[5]["cat"] = "cuda_profiler_range"  # a held kind: counted, not read
    data = _piece(events)
    assert piece_skip.skipped_counts(data, keep_python=False) is not None
    _same(decode_piece_columns(data, False),
          piece_columns(trace_stream.decode_piece(data), False))


@pytest.mark.parametrize("read", [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 1.0},
    {"ph": "X", "cat": "Kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 1.0},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 1, "ts": 2.0,
     "args": {"Device Type": 1, "Device Id": 0, "Bytes": 8, "Total Allocated": 8}},
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
], ids=["kernel", "old-name", "allocator", "thread-name"])
@pytest.mark.parametrize("at", [0, 20, 39])
def test_an_event_the_tables_read_sends_its_piece_to_the_full_decode(read, at):
    events = [_python(i) for i in range(40)]
    events[at] = read
    data = _piece(events)
    assert piece_skip.skipped_counts(data, keep_python=False) is None
    _same(decode_piece_columns(data, False),
          piece_columns(trace_stream.decode_piece(data), False))


def test_python_functions_are_read_when_asked():
    data = _piece([_python(i) for i in range(10)])
    assert piece_skip.skipped_counts(data, keep_python=True) is None
    assert len(decode_piece_columns(data, True).events["ts"]) == 10


@pytest.mark.parametrize("bad", [b'"pid": "\xff"', b'"name": "\xfe"', b'"bytes": "\xff"'])
def test_a_malformed_byte_in_a_skipped_piece_is_refused_as_the_full_decode_refuses_it(
        tmp_path, monkeypatch, bad):
    """Invalid UTF-8 in a field the full decode reads as text: the file is corrupt whichever
    decode looks at it (the light decode does not skip over it)."""
    monkeypatch.setattr(tracefile, "CHUNK", 300)  # the Python calls in pieces of their own
    doc = _trace_doc()
    doc["traceEvents"] += [_python(i) for i in range(200)]
    doc["traceEvents"][-100]["args"] = {"bytes": 1, **doc["traceEvents"][-100]["args"]}
    good = kineto_layout(doc)
    key = bad.split(b":")[0]
    at = good.index(key, good.index(b'"train.py(100): step"') - 40)
    data = good[:at] + bad + good[good.index(b",", at + len(key) + 2):]
    assert data.count(b"{") == good.count(b"{") and data.count(b"}") == good.count(b"}")
    path = tmp_path / "t.json"
    path.write_bytes(data)
    with pytest.raises(TraceError, match="corrupt|UTF-8|malformed"):
        trace._load_whole(path, keep_python=False)
    with pytest.raises(TraceError, match="corrupt|UTF-8|malformed"):
        trace.load_trace(path)


@pytest.mark.parametrize("chunk", [7, 300, 4096])
def test_a_trace_with_a_python_block_streams_to_the_whole_files_table(tmp_path, monkeypatch,
                                                                      chunk):
    monkeypatch.setattr(tracefile, "CHUNK", chunk)
    doc = _trace_doc()
    doc["traceEvents"] += [_python(i) for i in range(300)] + [_flow(i) for i in range(100)]
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(doc))
    skipped = []
    real = piece_skip.skipped_counts
    monkeypatch.setattr(piece_skip, "skipped_counts",
                        lambda p, k: skipped.append(r := real(p, k)) or r)
    for keep in (False, True):
        streamed = trace._load_streamed(path, tracefile.Prefetch(path).chunks(), keep)
        whole = trace._load_whole(path, keep_python=keep)
        assert_frame_equal(streamed.events, whole.events, check_exact=True)
        assert_frame_equal(streamed.memory, whole.memory, check_exact=True)
        assert streamed.info == whole.info
    assert any(s is not None for s in skipped)  # the light decode was taken


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 64])
def test_pieces_cut_at_the_same_boundaries_whatever_the_chunks(chunk):
    """A `},\\n` split across two, three or more chunks is found as in one chunk."""
    data = kineto_layout(_trace_doc())
    whole = list(trace_stream.split_events([data]))
    chunks = [data[i:i + chunk] for i in range(0, len(data), chunk)]
    pieces = list(trace_stream.split_events(chunks))
    def text(pieces: list) -> bytes:  # each piece is `[` + its events + `]`, cut at `},`
        return pieces[0] + b"".join(bytes(p)[1:-1] + b"," for p in pieces[1:-1]) + pieces[-1]
    assert text(pieces) == text(whole) == data
    assert len(pieces) > 10
    for p in pieces[1:-1]:
        assert len(trace_stream.decode_piece(p)) >= 1
