"""The rules of docs/architecture.md that a tool can check: import rules, strict types, lint.

Each test runs the tool the way a developer would from the repository root, so a rule broken
anywhere in the package fails here with the tool's own report.
"""

import subprocess
import sys

from paths import ROOT


def _run(*args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_import_rules_hold():
    from importlinter.cli import lint_imports

    sys.path.insert(0, str(ROOT))  # the package under test, not an installed copy
    try:
        code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    finally:
        sys.path.remove(str(ROOT))
    assert code == 0, "an import rule of docs/architecture.md is broken: run `lint-imports`"


def test_import_rules_are_the_documented_ones():
    """Every contract in pyproject.toml is stated, by name, in docs/architecture.md."""
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    doc = (ROOT / "docs" / "architecture.md").read_text()
    for contract in contracts["contracts"]:
        assert f"**{contract['name']}**" in doc, contract["name"]


def test_core_is_strictly_typed():
    done = _run("mypy", timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_is_clean():
    done = _run("ruff", "check", "jupyter_gpuprof", "tests", "benchmarks")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
