"""listing.json: a run's one-row description, cached so listing 1,000 runs reads small files."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping

from .json_checks import decode
from .run import SUMMARY_FILE, TRACE_ERROR_FILE, Run, atomic_write_bytes

LISTING_FILE = "listing.json"
# 2: rows carry `interrupted` / trace errors; 3: n_steps became n_step_times; 4: abilities,
# unavailable and command (server/abilities.py, the searchable command line); 5: warning;
# 6: keyed by the digest of meta.json's bytes (a rename storm left rows that disagreed with
# the meta)
CACHE_VERSION = 6


def _signature(run: Run) -> list[object]:
    """What a row is built from: the digest of the very meta.json bytes `run.meta` was read
    from (a rename between reading the meta and caching its row can never pass for the row of
    the new meta, however close in time and equal in size), and the size and mtime of the other
    files, taken before the row reads them."""
    out: list[object] = [run.digest]
    for name in (SUMMARY_FILE, TRACE_ERROR_FILE):
        try:
            st = os.stat(run.path / name, follow_symlinks=False)
            out.append([st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([-1, -1])
    return out


def cached_row(run: Run,
               build: Callable[[Run], Mapping[str, object]]) -> Mapping[str, object]:
    """The run's row from listing.json when still current, else ``build(run)`` (then cached).

    The row's shape is its builder's (the server's `RunListing`): a cached one is the JSON
    object as decoded, for the caller to check against that shape.
    """
    sig = _signature(run)
    cache = run.path / LISTING_FILE
    try:
        data = decode(run.read_file(LISTING_FILE))  # never through a symlink
        if (isinstance(data, dict) and data.get("version") == CACHE_VERSION
                and data.get("signature") == sig and isinstance(data.get("row"), dict)):
            return dict(data["row"])
    except (OSError, ValueError):
        pass
    row = build(run)
    # a run being written changes under us, and a meta built in memory has no digest: never cached
    if run.meta.status != "running" and run.digest is not None:
        try:
            payload = {"version": CACHE_VERSION, "signature": sig, "row": row}
            # into the existing folder only: a run deleted meanwhile is not recreated
            atomic_write_bytes(cache, json.dumps(payload, default=str, allow_nan=False).encode())
        except (OSError, ValueError):
            pass  # a read-only runs root still lists, just without the cache
    return row
