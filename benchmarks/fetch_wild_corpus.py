"""Fetch the third-party trace corpus from the public repositories it was taken from.

It exists so that the corpus benchmark can be re-run anywhere: ``tests/data/wild`` holds the
small traces (committed), and ``wild_corpus_manifest.json`` names every trace of the corpus by
repository, commit and path, so the larger ones can be downloaded into a scratch folder.

    python benchmarks/fetch_wild_corpus.py OUT                 # the traces not committed -> OUT
    python benchmarks/fetch_wild_corpus.py --committed OUT     # rebuild the committed set in OUT
    python benchmarks/fetch_wild_corpus.py OUT --clone pytorch/kineto=/path/to/kineto/.git

Files are read from GitHub's raw URLs at the recorded commit, or from a local clone given with
``--clone`` (``git cat-file``). Plain ``.json`` files and tar members are stored gzipped.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import urllib.request
from typing import NamedTuple

RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


class Entry(NamedTuple):
    """One trace: where it comes from and where it goes in the corpus."""

    repo: str
    commit: str
    path: str
    tar_member: str | None
    dest: str
    committed: bool
    issue_items: str


MANIFEST_FILE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "wild_corpus_manifest.json"
)


def load_manifest(path: str = MANIFEST_FILE) -> list[Entry]:
    """Every trace of the corpus, as recorded in the manifest file beside this script."""
    with open(path) as f:
        return [Entry(**row) for row in json.load(f)]


def _read_source(entry: Entry, clones: dict[str, str]) -> bytes:
    """Bytes of the file at entry.commit: from a local clone when given, else from GitHub."""
    if entry.repo in clones:
        return subprocess.run(
            [
                "git",
                "--git-dir",
                clones[entry.repo],
                "cat-file",
                "blob",
                f"{entry.commit}:{entry.path}",
            ],
            check=True,
            capture_output=True,
        ).stdout
    url = RAW_URL.format(repo=entry.repo, commit=entry.commit, path=entry.path)
    with urllib.request.urlopen(url, timeout=120) as response:
        return response.read()


def _trace_bytes(entry: Entry, raw: bytes) -> bytes:
    """The trace itself, gzipped: extracted from a tar when the entry names a member."""
    if entry.tar_member:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
            member = tar.extractfile(entry.tar_member)
            if member is None:
                raise SystemExit(f"{entry.path} has no file {entry.tar_member}")
            raw = member.read()
    if entry.dest.endswith(".gz") and not raw[:2] == b"\x1f\x8b":
        raw = gzip.compress(raw, compresslevel=9, mtime=0)
    return raw


def fetch(out: str, committed: bool, clones: dict[str, str]) -> int:
    """Write every manifest entry of the chosen set under out; return how many were written."""
    cache: dict[tuple[str, str, str], bytes] = {}
    written = 0
    for entry in load_manifest():
        if entry.committed != committed:
            continue
        target = os.path.join(out, entry.dest)
        if os.path.exists(target):
            continue
        key = (entry.repo, entry.commit, entry.path)
        if key not in cache:
            cache[key] = _read_source(entry, clones)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(_trace_bytes(entry, cache[key]))
        written += 1
    return written


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("out", help="folder to write the corpus into")
    ap.add_argument("--committed", action="store_true", help="the committed set instead")
    ap.add_argument("--clone", action="append", default=[], metavar="OWNER/NAME=GITDIR")
    a = ap.parse_args(argv)
    clones = {}
    for spec in a.clone:
        repo, sep, gitdir = spec.partition("=")
        if not sep:
            ap.error(f"--clone {spec}: write it as OWNER/NAME=GITDIR")
        clones[repo] = gitdir
    try:
        n = fetch(a.out, a.committed, clones)
    except (OSError, subprocess.CalledProcessError) as exc:
        sys.exit(f"fetch failed: {exc}; check the network or pass --clone OWNER/NAME=GITDIR")
    print(f"{n} trace(s) written under {a.out}")


if __name__ == "__main__":
    main()
