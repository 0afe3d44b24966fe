"""listing.json: a cached row is the row of the very meta.json it was built from."""

from __future__ import annotations

from jupyter_gpuprof.server.runs import describe_run
from jupyter_gpuprof.store import RunStore
from jupyter_gpuprof.store.run import Run


def _rows_and_metas(store: RunStore) -> list[tuple[object, object, object, object]]:
    out = []
    for entry in store.list():
        assert isinstance(entry, Run)
        row = describe_run(entry)
        out.append((row["name"], row["tags"], entry.meta.name, entry.meta.tags))
    return out


def test_a_rename_between_reading_the_meta_and_caching_its_row_never_sticks(tmp_path):
    """The list reads every meta.json first and builds (and caches) the rows after: a rename
    landing in between, of the same length in the same clock tick, once left a row cached
    under the new file's size and mtime, so the list showed the old name from then on."""
    store = RunStore(tmp_path)
    ids = []
    for i in range(6):
        run = store.create(f"run {i}")
        run.meta.status = "complete"
        run.write_meta()
        ids.append(run.id)
    for round_ in range(5):
        listed = store.list()  # every meta read now
        for i, run_id in enumerate(ids):
            store.update(run_id, name=f"name {round_}{i}", tags=[f"t{round_}"])
        for entry in listed:  # rows built (and cached) from the metas read before the renames
            assert isinstance(entry, Run)
            describe_run(entry)
        for row_name, row_tags, name, tags in _rows_and_metas(store):
            assert (row_name, row_tags) == (name, tags)
