"""Rank summaries written where each rank ran and merged here give the same cross-rank answer."""

import gzip
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from ddp_scenarios import gpu_straggler, write_run

from jupyter_gpuprof.analysis.distributed import analyze_ranks
from jupyter_gpuprof.analysis.rank_files import (
    RANK_SUMMARY_ENDING,
    folder_rank_summaries,
    read_rank_summaries,
    read_rank_summary,
    write_rank_summary,
)
from jupyter_gpuprof.analysis.rank_loading import (
    load_rank,
    load_ranks,
    main,
    summarize_trace_to_file,
)
from jupyter_gpuprof.analysis.timeline_ranks import merge_rank_lanes
from jupyter_gpuprof.analysis.tracefile import TraceError
from jupyter_gpuprof.store.layout import folder_traces

REAL = Path(__file__).resolve().parent.parent / "data" / "real"


def _same(a, b):
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True),
                                  check_dtype=False)


@pytest.mark.parametrize("run", ["ddp2_heavy1", "ddp2_balanced", "ddp_workload_straggler",
                                 "ddp_workload_comm"])
def test_summaries_from_files_give_the_same_cross_rank_tables(tmp_path, run):
    traces = sorted((REAL / run).glob("trace.rank*.json.gz"))
    here = [s for _, s in load_ranks(traces, workers=1, keep_analysis=False)]
    for t in traces:  # each "machine" reduces its own trace
        shutil.copy(t, tmp_path / t.name)
        summarize_trace_to_file(tmp_path / t.name)
    files = folder_rank_summaries(tmp_path)
    assert [f.name for f in files] == [t.name.replace(".json.gz", RANK_SUMMARY_ENDING)
                                       for t in traces]
    assert folder_traces(tmp_path) == [tmp_path / t.name for t in traces]  # beside, not traces
    merged, direct = analyze_ranks(read_rank_summaries(files)), analyze_ranks(here)
    for table in ("ranks", "rank_steps", "collectives", "imbalance"):
        _same(getattr(merged, table), getattr(direct, table))
    assert (merged.n_matched, merged.n_unmatched) == (direct.n_matched, direct.n_unmatched)
    s, t = merged.slowest(), direct.slowest()
    assert int(s["rank"]) == int(t["rank"]) and s["phase"] == t["phase"]


def test_the_straggler_verdict_survives_the_file(tmp_path):
    folder = write_run(tmp_path / "run", gpu_straggler())
    out = tmp_path / "summaries"
    out.mkdir()
    for t in sorted(folder.glob("trace.rank*.json.gz")):
        summarize_trace_to_file(t, out / t.name.replace(".json.gz", RANK_SUMMARY_ENDING))
    d = analyze_ranks(read_rank_summaries(folder_rank_summaries(out)))
    s = d.slowest()
    assert s["rank"] == 1 and s["phase"] == "gpu_work"
    assert s["extra_ms"] == pytest.approx(2.0)


def test_lanes_round_trip(tmp_path):
    traces = sorted((REAL / "ddp2_heavy1").glob("trace.rank*.json.gz"))
    done = load_ranks(traces, workers=1, keep_analysis=False, timeline=True)
    back = []
    for i, (_, s) in enumerate(done):
        out = write_rank_summary(s, tmp_path / f"r{i}{RANK_SUMMARY_ENDING}")
        back.append(read_rank_summary(out))
    assert back[0].lanes is not None
    assert merge_rank_lanes([s.lanes for s in back], None, 1) == merge_rank_lanes(
        [s.lanes for _, s in done], None, 1)


def test_load_rank_reads_a_summary_file_without_analysing(tmp_path):
    t = REAL / "ddp2_balanced" / "trace.rank1.json.gz"
    out = summarize_trace_to_file(t, tmp_path / ("x" + RANK_SUMMARY_ENDING))
    a, s = load_rank(out)
    assert a is None and s.rank == 1 and len(s.collectives) > 0


def test_bad_files_are_one_line_errors(tmp_path):
    p = tmp_path / ("bad" + RANK_SUMMARY_ENDING)
    p.write_bytes(b"not gzip")
    with pytest.raises(TraceError, match="unreadable rank summary"):
        read_rank_summary(p)
    p.write_bytes(gzip.compress(json.dumps({"traceEvents": []}).encode()))
    with pytest.raises(TraceError, match="not a rank summary file"):
        read_rank_summary(p)
    p.write_bytes(gzip.compress(json.dumps(
        {"format": "jupyter-gpuprof-rank-summary", "version": 99}).encode()))
    with pytest.raises(TraceError, match="version 99"):
        read_rank_summary(p)
    p.write_bytes(gzip.compress(json.dumps(
        {"format": "jupyter-gpuprof-rank-summary", "version": 1, "rank": 0}).encode()))
    with pytest.raises(TraceError, match="damaged rank summary"):
        read_rank_summary(p)


def test_command_line(tmp_path, capsys):
    t = tmp_path / "trace.rank0.json.gz"
    shutil.copy(REAL / "ddp2_balanced" / "trace.rank0.json.gz", t)
    assert main([str(t)]) == 0
    assert capsys.readouterr().out.strip().endswith("trace.rank0" + RANK_SUMMARY_ENDING)
    assert main([str(tmp_path / "missing.json.gz")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1


def test_a_summary_states_what_the_report_shows_per_rank_and_keeps_it_in_the_file(tmp_path):
    traces = sorted((REAL / "ddp2_heavy1").glob("trace.rank*.json.gz"))
    done = load_ranks(traces, workers=1)
    for i, (a, s) in enumerate(done):
        assert s.step_median_ms == a.profiled["median_ms"] and s.busy_pct == a.busy_pct
        assert s.warnings == list(a.info.warnings) + a.window.notes()
        back = read_rank_summary(write_rank_summary(s, tmp_path / f"r{i}{RANK_SUMMARY_ENDING}"))
        assert (back.step_median_ms, back.busy_pct, back.warnings) == (
            s.step_median_ms, s.busy_pct, s.warnings)
    assert done[0][1].step_median_ms != done[1][1].step_median_ms  # heavy1: rank 1 is slower


def test_only_the_chosen_ranks_bring_their_full_analysis_back():
    traces = sorted((REAL / "ddp2_balanced").glob("trace.rank*.json.gz"))
    done = load_ranks(traces, workers=1, keep_analysis={1})
    assert done[0][0] is None and done[1][0] is not None
    assert [s.rank for _, s in done] == [0, 1]
