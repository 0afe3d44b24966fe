"""Bootstrap of `jupyter gpuprof run`: start the script capture, then chain to the next one."""

import importlib.util
import os
import sys
from importlib.machinery import PathFinder

_HERE = os.path.dirname(os.path.abspath(__file__))


def _start_capture() -> None:
    if not os.environ.get("JUPYTER_GPUPROF_RUN_DIR"):
        return
    # <root>/jupyter_gpuprof/capture/bootstrap: make the package importable even when not installed.
    root = os.path.dirname(os.path.dirname(os.path.dirname(_HERE)))
    if root not in sys.path:
        sys.path.append(root)
    try:
        import jupyter_gpuprof.launcher.autorun  # noqa: F401
    except Exception as e:  # never break the user's program
        sys.stderr.write(f"jupyter_gpuprof: script capture disabled: {type(e).__name__}: {e}\n")


def _chain() -> None:
    path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]
    spec = PathFinder.find_spec("sitecustomize", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_start_capture()
_chain()
