"""The shape of the Nsight Compute part, checked over its import graph (docs/ncu.md says it).

Inside `jupyter_gpuprof/ncu/` a module imports only the stages before it; outside, code uses
the one entry point `jupyter_gpuprof.ncu` and the pipeline layers never import it at all.
"""

from __future__ import annotations

import ast
from pathlib import Path

from jupyter_gpuprof import ncu

PACKAGE = Path(ncu.__file__).parent
ROOT = PACKAGE.parent
#: the order data flows through the part; a module may import only those before it
STAGES = [
    "options",
    "errors",
    "driver",
    "targets",
    "replay_script",
    "replay",
    "session",
    "readers",
    "rep_reader",
    "metrics",
    "rules",
    "panel",
    "results",
    "magic",
    "__init__",
]
#: layers the ncu part feeds, which therefore never import it
NEVER_IMPORT_NCU = ("analysis", "advice", "views", "store", "server")


def module_name(path: Path) -> str:
    """`jupyter_gpuprof.ncu.driver` for ROOT/ncu/driver.py (packages end in `__init__`)."""
    rel = path.relative_to(ROOT.parent).with_suffix("")
    return ".".join(rel.parts)


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(absolute module, names) of every import in a file, lazy ones inside functions too."""
    package = module_name(path).split(".")[:-1]  # for __init__.py: the package itself
    out: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out += [(a.name, []) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            out.append((mod, [a.name for a in node.names]))
    return out


def ncu_stages_imported(path: Path) -> set[str]:
    """The ncu modules a file depends on (a name taken from the package counts as its module)."""
    found = set()
    for mod, names in imports(path):
        if mod == "jupyter_gpuprof.ncu":
            for n in names:
                found.add(n if n in STAGES else ncu.PUBLIC.get(n, "__init__"))
        elif mod.startswith("jupyter_gpuprof.ncu."):
            found.add(mod.split(".")[2])
    return found


def test_every_module_of_the_part_has_a_stage():
    assert {p.stem for p in PACKAGE.glob("*.py")} == set(STAGES)


def test_each_stage_imports_only_earlier_ones():
    for path in PACKAGE.glob("*.py"):
        rank = STAGES.index(path.stem)
        later = {m for m in ncu_stages_imported(path) if STAGES.index(m) >= rank}
        assert not later, f"{path.name} imports later stages {sorted(later)}"


def test_outside_code_uses_the_one_entry_point():
    for path in ROOT.rglob("*.py"):
        if PACKAGE in path.parents:
            continue
        mods = {m for m, _ in imports(path) if m.startswith("jupyter_gpuprof.ncu")}
        layer = path.relative_to(ROOT).parts[0]
        if layer in NEVER_IMPORT_NCU:
            assert not mods, f"{path.relative_to(ROOT)} imports the ncu part: {sorted(mods)}"
        deep = {m for m in mods if m.startswith("jupyter_gpuprof.ncu.")}
        assert not deep, f"{path.relative_to(ROOT)} imports ncu internals {sorted(deep)}"


def test_public_names_resolve_lazily():
    for name in ncu.__all__:
        assert getattr(ncu, name) is not None
    assert sorted(ncu.PUBLIC) == ncu.__all__
