"""The server's memory stays bounded by one file of a shared runs folder: a trace inflated past
its cap is refused without inflating it all, a step-time comparison resamples a capped sample,
and the per-step timeline is built once per trace (one parse for parallel requests)."""

from __future__ import annotations

import gzip
import json
import os
import threading
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from runs_fixtures import real_run

from jupyter_gpuprof.analysis import compare, tracefile
from jupyter_gpuprof.report import timeline_step
from jupyter_gpuprof.server import actions
from jupyter_gpuprof.store import step_index

RUN = "20261129-191322-compute"


def _bomb(path: Path, mb: int) -> Path:
    c = zlib.compressobj(9, wbits=31)
    parts = [c.compress(b'{"traceEvents": [')]
    parts += [c.compress(b" " * (1 << 20)) for _ in range(mb)]
    path.write_bytes(b"".join([*parts, c.compress(b"]}"), c.flush()]))
    return path


def test_a_gzip_that_inflates_past_the_cap_is_refused_early(tmp_path, monkeypatch) -> None:
    bomb = _bomb(tmp_path / "trace.json.gz", 64)
    seen: list[int] = []
    real = tracefile._decompressobj

    class Counting:
        def __init__(self) -> None:
            self.d = real()

        def __getattr__(self, name: str) -> object:
            return getattr(self.d, name)

        def decompress(self, data: bytes, limit: int) -> bytes:
            out: bytes = self.d.decompress(data, limit)
            seen.append(len(out))
            return out

    monkeypatch.setattr(tracefile, "_decompressobj", Counting)
    tracefile.set_max_trace_mb(16)
    try:
        with pytest.raises(tracefile.TraceError) as e:
            tracefile.read_trace_bytes(bomb)
    finally:
        tracefile.set_max_trace_mb(None)
    assert "larger than 16 MB" in str(e.value) and "\n" not in str(e.value)
    assert sum(seen) <= (16 << 20) + tracefile.CHUNK  # stopped at the cap, not at 64 MB
    monkeypatch.setenv(tracefile.MAX_TRACE_ENV, "128")
    assert len(tracefile.read_trace_bytes(bomb)) == (64 << 20) + 19


def test_plain_multi_member_and_padded_gzip_still_read(tmp_path) -> None:
    body = b'{"traceEvents": []}'
    for name, data in (("plain.json", body), ("two.json.gz", gzip.compress(body[:5])
                                              + gzip.compress(body[5:])),
                       ("pad.json.gz", gzip.compress(body) + b"\0" * 8)):
        (tmp_path / name).write_bytes(data)
        assert tracefile.read_trace_bytes(tmp_path / name) == body, name
    (tmp_path / "big.json").write_bytes(body + b" " * 2048)
    with pytest.raises(tracefile.TraceError, match="larger than"):
        tracefile.read_trace_bytes(tmp_path / "big.json", max_bytes=1024)


def test_event_count_is_capped_before_decoding(tmp_path) -> None:
    events = ",".join('{"ph": "X", "name": "a", "ts": 1, "dur": 1}' for _ in range(50))
    (tmp_path / "t.json").write_text(f'{{"traceEvents": [{events}]}}')
    with pytest.raises(tracefile.TraceError, match="about 50 events"):
        tracefile.check_events((tmp_path / "t.json").read_bytes(), tmp_path / "t.json", 49)
    tracefile.check_events((tmp_path / "t.json").read_bytes(), tmp_path / "t.json", 50)


def test_the_bootstrap_resamples_a_capped_sample() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(100.0, 1.0, 80_000)
    tracemalloc.start()
    try:
        change = compare.step_change(a, a * 0.9)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert change["n_before"] == change["n_after"] == 80_000  # medians over every step
    assert change["verdict"] == "significant" and (change["ci_high_pct"] or 0) < 0
    # all 80,000 steps resampled 200 at a time: 128 MB a batch; 5,000 steps resampled 4,000
    # times at once: 160 MB; both bounds: 8 MB a batch
    assert peak < 100 << 20, peak >> 20


@pytest.fixture
def runs_root(tmp_path: Path) -> Path:
    root = tmp_path / "runs"
    real_run(root, RUN, "compute")
    return root


def test_parallel_timeline_requests_parse_the_trace_once(runs_root, monkeypatch) -> None:
    parsed: list[Path] = []
    real = timeline_step.load_trace

    def counting(path: Path) -> object:
        parsed.append(path)
        return real(path)

    monkeypatch.setattr(timeline_step, "load_trace", counting)
    replies: list[object] = []
    threads = [threading.Thread(target=lambda s=s: replies.append(
        actions.get_step_timeline(runs_root, RUN, str(s)))) for s in (3, 4, 5, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(replies) == 4 and len(parsed) == 1
    uncached = timeline_step.run_step_timeline(
        actions.RunStore(runs_root).get(RUN), 4)  # the direct slice: the same answer
    assert json.loads(json.dumps(uncached)) == actions.get_step_timeline(runs_root, RUN, "4")
    assert len(parsed) == 2
    with pytest.raises(actions.RunNotFound, match="no profiled step 9999"):
        actions.get_step_timeline(runs_root, RUN, "9999")
    assert len(parsed) == 2
    trace = runs_root / RUN / "trace.json.gz"  # a new trace: the index is built again
    os.utime(trace, ns=(trace.stat().st_atime_ns, trace.stat().st_mtime_ns + 10**9))
    actions.get_step_timeline(runs_root, RUN, "3")
    assert len(parsed) == 3 and (runs_root / RUN / step_index.INDEX_FILE).is_file()
