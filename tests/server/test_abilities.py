"""What a run offers is decided once (server/abilities.py) and carried by its row: a failed
run says why and offers no dead Download trace; only complete, readable runs are comparable."""

from __future__ import annotations

from pathlib import Path

from runs_fixtures import real_run, write_meta

from jupyter_gpuprof.server.abilities import ACTIONS
from jupyter_gpuprof.server.runs import list_runs
from jupyter_gpuprof.store.run import TRACE_ERROR_FILE

NEVER_STEPPED = ("no training steps seen: the script never called optimizer.step() "
                 "(or jupyter_gpuprof.step())")


def _rows(root: Path, q: str = "") -> dict[str, dict]:
    return {r["id"]: dict(r) for r in list_runs(root, q=q)["runs"]}


def test_each_kind_of_run_offers_what_works(tmp_path: Path) -> None:
    real_run(tmp_path, "20261129-200000-ok", "tinygpt_before",
             code="python train.py --dtype fp32")
    write_meta(tmp_path / "20261129-200100-failed", status="failed", error=NEVER_STEPPED,
               code="python main.py --epochs 1")
    broken = real_run(tmp_path, "20261129-200200-broken", "tinygpt_after")
    (broken / TRACE_ERROR_FILE).write_text("the trace is truncated\n", encoding="utf-8")
    rows = _rows(tmp_path)
    assert rows["20261129-200000-ok"]["abilities"] == list(ACTIONS)
    assert rows["20261129-200000-ok"]["unavailable"] is None
    failed = rows["20261129-200100-failed"]
    assert failed["abilities"] == []  # no Download trace (it answered 404), no compare
    assert failed["unavailable"] == f"The run failed: {NEVER_STEPPED}"
    assert rows["20261129-200200-broken"]["abilities"] == ["download_trace", "open_perfetto"]
    assert rows["20261129-200200-broken"]["unavailable"] == (
        "The trace cannot be read: the trace is truncated")


def test_a_running_run_is_not_comparable(tmp_path: Path) -> None:
    real_run(tmp_path, "20261129-200000-live", "tinygpt_before", status="running")
    row = _rows(tmp_path)["20261129-200000-live"]
    assert row["abilities"] == ["download_trace", "open_perfetto"]
    assert row["unavailable"] == (
        "The run is still being written: its report appears when it finishes.")


def test_search_covers_the_command_line(tmp_path: Path) -> None:
    write_meta(tmp_path / "20261129-200000-main", code="python main.py --batch-size 64")
    write_meta(tmp_path / "20261129-200100-main", code="python main.py --batch-size 8")
    assert list(_rows(tmp_path, "batch-size 64")) == ["20261129-200000-main"]
    assert _rows(tmp_path)["20261129-200100-main"]["command"] == (
        "python main.py --batch-size 8")
