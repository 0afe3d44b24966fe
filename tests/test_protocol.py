"""The `jupyter gpuprof run` protocol: one spelling of each variable, the child side included."""

from __future__ import annotations

import ast
from pathlib import Path

from jupyter_gpuprof import protocol
from jupyter_gpuprof.launcher.run import child_env


def test_the_bootstrap_spells_the_run_folder_variable_as_the_protocol_does():
    """The bootstrap runs before the package can be imported, so it writes the name itself."""
    source = (protocol.BOOTSTRAP / "sitecustomize.py").read_text()
    names = {n.value for n in ast.walk(ast.parse(source))
             if isinstance(n, ast.Constant) and str(n.value).startswith("JUPYTER_GPUPROF_")}
    assert names == {protocol.ENV_RUN_DIR}


def test_no_module_but_the_protocol_spells_a_protocol_variable():
    root = Path(protocol.__file__).parent
    spelled = {name: getattr(protocol, name) for name in dir(protocol) if name.startswith("ENV_")}
    for path in root.rglob("*.py"):
        if path.name in ("protocol.py", "sitecustomize.py"):
            continue
        text = path.read_text()
        assert not [v for v in spelled.values() if f'"{v}"' in text], path


def test_a_child_inherits_no_per_run_variable_of_a_run_around_it(tmp_path, monkeypatch):
    for name in protocol.PER_RUN:
        monkeypatch.setenv(name, "from-the-outer-run")
    env = child_env(tmp_path, {"ranks": None})
    assert not set(protocol.PER_RUN) & set(env)
    assert env[protocol.ENV_RUN_DIR] == str(tmp_path.resolve())
    assert env["PYTHONPATH"].split(":")[0] == str(protocol.BOOTSTRAP)
