"""Property-based fuzzing of the run-folder reader (hypothesis, derandomized, a few seconds each).

A meta.json, with any JSON put anywhere inside it or as raw bytes, is either a run with its
problems (one line each) or a `ValueError` of one line; the store's other files (summary.json,
listing.json, tries/<fix>.json, the timeline index) are used or ignored, never raised from.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from malformed_meta import base_meta

from jupyter_gpuprof.server.runs import describe_run
from jupyter_gpuprof.store import step_index
from jupyter_gpuprof.store.run import open_run, parse_meta
from jupyter_gpuprof.store.runs import RunStore
from jupyter_gpuprof.store.try_files import read_losses, read_try_result

FUZZ = settings(max_examples=80, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
SCALARS = (st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=6)
           | st.floats(allow_nan=False, allow_infinity=False))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value (keys and list positions)."""
    out = [path] if path else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _paths(v, (*path, i))
    return out


PATHS = _paths(base_meta())


@st.composite
def mutated_metas(draw: st.DrawFn) -> dict[str, Any]:
    """`base_meta` with 1-3 of its places replaced by any JSON value, or removed."""
    meta = base_meta()
    for _ in range(draw(st.integers(1, 3))):
        where = draw(st.sampled_from(PATHS))
        node: Any = meta
        try:
            for step in where[:-1]:
                node = node[step]
            if draw(st.booleans()) and isinstance(node, dict):
                node.pop(where[-1], None)
            else:
                node[where[-1]] = draw(VALUES)
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation replaced this place's parent
    return meta


def _one_line(text: str) -> bool:
    return bool(text) and "\n" not in text


@FUZZ
@given(meta=mutated_metas())
def test_any_mutated_meta_is_a_run_with_problems_or_one_error(meta: dict[str, Any]) -> None:
    try:
        run_meta = parse_meta(json.dumps(meta).encode())
    except ValueError as e:
        assert _one_line(str(e))
        return
    assert all(_one_line(p) for p in run_meta.problems)
    written = json.loads(json.dumps(run_meta.to_json()))
    assert set(written) >= set(meta) - {"problems", "_as_read"}  # nothing the file held is lost


@FUZZ
@given(data=st.binary(max_size=200) | st.text(max_size=80).map(str.encode))
def test_any_bytes_as_meta_are_a_run_or_one_error(data: bytes) -> None:
    try:
        parse_meta(data)
    except ValueError as e:
        assert _one_line(str(e))


def test_the_folder_files_are_used_or_ignored_never_raised(tmp_path: Path) -> None:
    folder = tmp_path / "runs" / "20261129-200000-r"
    folder.mkdir(parents=True)
    (folder / "meta.json").write_text(json.dumps(base_meta()))
    (folder / "tries").mkdir()
    seen = {"rows": 0}

    @settings(FUZZ, max_examples=30)
    @given(summary=VALUES, listing=VALUES, try_result=VALUES, losses=VALUES, index=VALUES,
           meta=mutated_metas())
    def check(summary: Any, listing: Any, try_result: Any, losses: Any, index: Any,
              meta: dict[str, Any]) -> None:
        (folder / "meta.json").write_text(json.dumps(meta))
        (folder / "summary.json").write_text(json.dumps(summary))
        (folder / "listing.json").write_text(json.dumps(listing))
        (folder / "tries" / "bf16.json").write_text(json.dumps(try_result))
        (folder / "tries" / "bf16.losses.json").write_text(json.dumps(losses))
        (folder / step_index.INDEX_FILE).write_text(json.dumps(index))
        for entry in RunStore(tmp_path / "runs").list():
            row = describe_run(entry)
            json.dumps(row, allow_nan=False)
            seen["rows"] += 1
            if not entry.broken:
                run = open_run(folder)
                read_try_result(run, "bf16")
                assert all(isinstance(x, float) for x in read_losses(run, "bf16"))
                assert step_index.read_index(run) is None  # never built from this trace

    check()
    assert seen["rows"] >= 30
