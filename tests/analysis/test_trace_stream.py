"""The streamed reader: pieces cut only between events (braces in strings do not fool it), the
same table as reading the file whole, and the whole-file errors for broken files."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path

import pytest
from kineto_layout import TRICKY, kineto_layout
from kineto_layout import trace_doc as _trace_doc
from pandas.testing import assert_frame_equal

from jupyter_gpuprof.analysis import piece_share, trace, trace_stream, tracefile
from jupyter_gpuprof.analysis.trace import TraceError, load_trace


@pytest.fixture
def small_chunks(monkeypatch):
    monkeypatch.setattr(tracefile, "CHUNK", 7)  # a cut in every event, most mid-string


@pytest.fixture(params=[0, 2], ids=["here", "decoders"])
def decoders(request):
    """Pieces decoded in this process only, or with two forked decoders claiming pieces."""
    return request.param


def _streamed(path: Path, n: int = 0) -> trace.Trace:
    """The streamed reader, with n forked decoders beside it (closed after)."""
    share = piece_share.PieceShare(path, n) if n else None
    try:
        chunks = share.chunks() if share is not None else tracefile.Prefetch(path).chunks()
        return trace._load_streamed(path, chunks, False, share)
    finally:
        if share is not None:
            share.close()


def _whole(path: Path) -> trace.Trace:
    return trace._load_whole(path, keep_python=False)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("chunk", [1, 7, 4096, 8 << 20])
def test_streamed_table_is_the_whole_files_table(tmp_path, monkeypatch, decoders, gz, chunk):
    monkeypatch.setattr(tracefile, "CHUNK", chunk)
    data = kineto_layout(_trace_doc())
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    pieces = list(trace_stream.split_events(tracefile.trace_chunks(path)))
    if chunk <= 7:
        assert len(pieces) > 20  # it streamed: many pieces, none of them cut inside a name
    streamed = _streamed(path, decoders)
    whole = _whole(path)
    assert_frame_equal(streamed.events, whole.events, check_exact=True)
    assert list(streamed.events["name"].cat.categories) == list(
        whole.events["name"].cat.categories)
    assert set(TRICKY) <= set(streamed.events["name"].astype(str))
    assert streamed.info == whole.info


def test_a_boundary_inside_an_event_is_caught_and_the_file_read_whole(tmp_path, small_chunks,
                                                                     decoders):
    """Another writer's layout, `},` and a newline inside an event's args: the piece does not
    decode as events, so the file is read whole (same result)."""
    doc = _trace_doc()
    for e in doc["traceEvents"]:
        e["args"] = {"nested": {"a": 1}, **e.get("args", {})}
    text = kineto_layout(doc).replace(b'{"a": 1},', b'{"a": 1},\n')
    path = tmp_path / "t.json"
    path.write_bytes(text)
    with pytest.raises(trace_stream.NotStreamable):
        _streamed(path, decoders)
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


def _one_event_pieces(tmp_path: Path, monkeypatch, n: int = 23) -> Path:
    """A trace cut into one piece per event, each op named after its position."""
    monkeypatch.setattr(tracefile, "CHUNK", 64)
    doc = {"schemaVersion": 1, "traceEvents": [
        {"ph": "X", "cat": "cpu_op", "name": f"op{i}", "pid": 1, "tid": 1, "ts": i, "dur": 1}
        for i in range(n)]}
    path = tmp_path / "t.json"
    path.write_bytes(kineto_layout(doc))
    return path


def _columns(path: Path, share: piece_share.PieceShare) -> list:
    """The body pieces' columns through the share, decoded slowly here (10 ms a piece), so
    the decoders claim pieces ahead of this process."""
    from jupyter_gpuprof.analysis.piece_columns import decode_piece_columns

    def slowly(piece):
        time.sleep(0.01)
        return decode_piece_columns(piece, False)

    pieces = trace_stream.all_but_last(trace_stream.split_events(tracefile.trace_chunks(path)),
                                       [])
    next(pieces)  # the head
    try:
        return list(share.columns(pieces, slowly))
    finally:
        share.close()


@pytest.mark.parametrize("n", [1, 2, 3])
def test_pieces_come_back_each_once_in_file_order_whoever_decoded_them(tmp_path, monkeypatch,
                                                                      n):
    """Every piece's columns, none dropped, repeated or swapped; the decoders did decode some."""
    share = piece_share.PieceShare(_one_event_pieces(tmp_path, monkeypatch), n)
    deadline = time.monotonic() + 30
    while share.board.owner(0) == 0 and time.monotonic() < deadline:
        time.sleep(0.001)  # a decoder has begun (on a loaded host it may start late)
    got = _columns(tmp_path / "t.json", share)
    assert [p.names for p in got] == [[f"op{i}"] for i in range(len(got))]
    assert len(got) > 15 and share.taken > 0


def test_a_decoder_that_dies_leaves_its_pieces_to_the_reader(tmp_path, monkeypatch):
    """A decoder that dies on a piece it claimed (never sent): that piece and the rest are
    decoded here, the same columns in the same order."""
    path = _one_event_pieces(tmp_path, monkeypatch, 40)
    from jupyter_gpuprof.analysis import piece_columns as pc

    real, parent = pc.decode_piece_columns, os.getpid()

    def dies_at_op9(piece, keep_python):
        if os.getpid() != parent and b'"op9"' in piece:
            os._exit(3)
        return real(piece, keep_python)

    monkeypatch.setattr(pc, "decode_piece_columns", dies_at_op9)
    pieces = list(trace_stream.split_events(tracefile.trace_chunks(path)))[1:-1]
    k9 = next(k for k, piece in enumerate(pieces) if b'"op9"' in piece)
    share = piece_share.PieceShare(path, 1)
    claim = share.board.claim

    def the_decoder_takes_op9(k, me):  # here only: the forked decoder has the real one
        while k == k9 and share.board.owner(k) == 0:
            time.sleep(0.001)  # wait until it has claimed the piece it will die on
        return claim(k, me)

    share.board.claim = the_decoder_takes_op9
    got = _columns(path, share)
    assert [p.names for p in got] == [[f"op{i}"] for i in range(len(got))] and len(got) > 30
    assert list(share.exits.values()) == [3]  # it died where it was made to, on its piece


def test_decoders_are_gone_once_the_trace_is_read(tmp_path, monkeypatch):
    path = _one_event_pieces(tmp_path, monkeypatch)
    share = piece_share.PieceShare(path, 2)
    pids = list(share.pids)
    trace._load_streamed(path, share.chunks(), False, share)
    assert share.pids == [] and not share.drain.is_alive()
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped: no zombie, no orphan left running


@pytest.mark.parametrize("gz", [False, True])
def test_the_first_decoder_hands_over_the_files_bytes(tmp_path, monkeypatch, gz):
    """The reader's chunks are the first decoder's: together, the file's JSON."""
    monkeypatch.setattr(tracefile, "CHUNK", 97)
    data = kineto_layout(_trace_doc())
    path = tmp_path / ("t.json.gz" if gz else "t.json")
    path.write_bytes(gzip.compress(data) if gz else data)
    share = piece_share.PieceShare(path, 1)
    share.board.at(1 << 40)  # no reader walks the pieces here: the decoder need not wait
    try:
        assert b"".join(share.chunks()) == data
    finally:
        share.close()


def test_chunks_go_on_from_where_a_dead_first_decoder_stopped(tmp_path, monkeypatch):
    """The first decoder dies after three chunks: the reader inflates the rest itself."""
    monkeypatch.setattr(tracefile, "CHUNK", 97)
    data = kineto_layout(_trace_doc())
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(data))
    handed = piece_share._handed

    def three_then_die(chunks, w):
        for i, chunk in enumerate(handed(chunks, w)):
            if i == 3:
                os._exit(4)
            yield chunk

    monkeypatch.setattr(piece_share, "_handed", three_then_die)
    share = piece_share.PieceShare(path, 1)
    share.board.at(1 << 40)
    try:
        got = list(share.chunks())
    finally:
        share.close()
    assert b"".join(got) == data and len(got) > 4
    assert list(share.exits.values()) == [4]


def test_a_corrupt_gzip_under_decoders_is_the_same_one_line_error(tmp_path, small_chunks):
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(kineto_layout(_trace_doc()))[:-40])
    share = piece_share.PieceShare(path, 2)
    with pytest.raises(TraceError, match="truncated or corrupt gzip"):
        load_trace(path, data=share)
    assert share.pids == []


def test_a_decoder_whose_reader_is_gone_stops(monkeypatch):
    """A decoder waiting for the reader to catch up ends when the reader has died."""
    board = piece_share._Board()
    assert all(board.claim(k, 1) for k in range(piece_share.AHEAD + 1))  # up to AHEAD past 0
    monkeypatch.setattr(piece_share.os, "getppid", lambda: board.parent + 1)
    with pytest.raises(SystemExit):
        board.claim(piece_share.AHEAD + 1, 1)


@pytest.mark.parametrize(("cores", "env", "n"), [
    (1, "", 0), (2, "", 0), (3, "", 2), (16, "", 8), (64, "", 8), (2, "3", 3), (16, "0", 0),
    (16, "many", 8)])
def test_decoders_leave_a_core_to_the_reader(tmp_path, monkeypatch, cores, env, n):
    path = tmp_path / "t.json"
    path.write_bytes(b" " * piece_share.MIN_BYTES)
    monkeypatch.setattr(piece_share.os, "sched_getaffinity", lambda _: set(range(cores)),
                        raising=False)
    monkeypatch.setattr(piece_share.threading, "active_count", lambda: 1)
    monkeypatch.setenv(piece_share.DECODERS_ENV, env)
    assert piece_share.decoders_wanted(path) == n


@pytest.mark.parametrize(("threads", "size", "gz", "n"), [
    (3, 1 << 30, False, 0), (1, piece_share.MIN_BYTES - 1, False, 0),
    (1, piece_share.MIN_BYTES // piece_share.GZIP_RATIO, True, 7),
    (1, piece_share.MIN_BYTES // piece_share.GZIP_RATIO - 1, True, 0)])
def test_no_decoders_beside_other_threads_or_for_a_small_file(tmp_path, monkeypatch, threads,
                                                               size, gz, n):
    """A kernel or the server runs other threads (a forked child would inherit their held
    locks); a small file is not worth a process."""
    path = tmp_path / "t.json"
    with open(path, "wb") as f:
        f.write(b"\x1f\x8b" if gz else b"{")
        f.truncate(size)
    monkeypatch.setattr(piece_share.os, "sched_getaffinity", lambda _: set(range(8)),
                        raising=False)
    monkeypatch.setattr(piece_share.threading, "active_count", lambda: threads)
    monkeypatch.delenv(piece_share.DECODERS_ENV, raising=False)
    assert piece_share.decoders_wanted(path) == n
