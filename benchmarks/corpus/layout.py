"""Lay the training-script corpus out from repository snapshots: files at pinned commits + data.

    python benchmarks/corpus/layout.py MIRRORS OUT

MIRRORS holds one bare clone per repository, named `owner+name/repo` (what the snapshot tool
gives); OUT (git-ignored, e.g. `.corpus`) gets one folder per manifest entry with the entry's
files at its pinned commit; `make_data` writes its synthetic data where it runs. Nothing here
is the scripts' code: it is read from the snapshots when the corpus is laid out, never
committed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

MANIFEST = Path(__file__).with_name("manifest.json")


def _show(mirror: Path, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(mirror), "show", f"{commit}:{path}"],
                          capture_output=True, check=True).stdout


def _random_tokens(folder: Path, vocab: int, tokens: int) -> None:
    """nanoGPT-style train.bin / val.bin of uniformly random token ids (uint16)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    rng.integers(0, vocab, tokens, dtype=np.uint16).tofile(folder / "train.bin")
    rng.integers(0, vocab, tokens // 10, dtype=np.uint16).tofile(folder / "val.bin")


def _mnist_idx(folder: Path, train: int, test: int) -> None:
    """torchvision's MNIST raw files (idx format) of random digits: the dataset class finds
    them and downloads nothing."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for prefix, n in (("train", train), ("t10k", test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        (folder / f"{prefix}-images-idx3-ubyte").write_bytes(
            np.array([0x803, n, 28, 28], dtype=">i4").tobytes() + images.tobytes())
        (folder / f"{prefix}-labels-idx1-ubyte").write_bytes(
            np.array([0x801, n], dtype=">i4").tobytes() + labels.tobytes())


def lay_out(mirrors: Path, out: Path) -> list[str]:
    """Every entry's folder under `out`; returns their ids."""
    entries = json.loads(MANIFEST.read_text())["scripts"]
    for e in entries:
        mirror = mirrors / e["repo"].replace("/", "+") / "repo"
        dest = out / e["id"]
        root = e.get("root", "")
        for f in e["files"]:
            target = dest / f
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(_show(mirror, e["commit"], f"{root}/{f}" if root else f))
        for target, source in e.get("same_as", {}).items():  # a file the snapshot lacks
            (dest / target).write_bytes((dest / source).read_bytes())
    return [e["id"] for e in entries]


def make_data(entry: dict, folder: Path) -> None:
    """An entry's synthetic data, written where its script reads it (on the GPU host: it
    need not travel)."""
    data = entry.get("data")
    if not data or (folder / data["dir"]).is_dir():
        return
    if data["kind"] == "random-tokens":
        _random_tokens(folder / data["dir"], data["vocab"], data["tokens"])
    elif data["kind"] == "mnist-idx":
        _mnist_idx(folder / data["dir"], data["train"], data["test"])


if __name__ == "__main__":
    ids = lay_out(Path(sys.argv[1]), Path(sys.argv[2]))
    print(f"laid out {len(ids)} scripts: {', '.join(ids)}", file=sys.stderr)
