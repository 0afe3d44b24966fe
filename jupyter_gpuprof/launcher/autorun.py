"""Script capture, imported at start-up by the bootstrap sitecustomize of `jupyter gpuprof run`.

It waits until the script imports torch (so a process that never does pays nothing and CUDA is
never touched early), then installs a hook-driven ProfileSession writing into the run folder
named by $JUPYTER_GPUPROF_RUN_DIR: trace.json.gz + meta.json, or per rank under torchrun.
Ranks outside $JUPYTER_GPUPROF_RANKS (`--ranks`) install nothing at all. With
$JUPYTER_GPUPROF_TRY set (`run --try`), the process is a try of that run instead: one fix is
switched on and only the unprofiled baseline is measured (tries/process.py).
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.util
import json
import os
import sys
from typing import Any

from ..protocol import ENV_LOSSES, ENV_RANKS, ENV_RUN_DIR, ENV_SETTINGS, ENV_STOP, ENV_TRY


class ScriptCapture:
    """The process's capture: started when torch is imported, closed at exit."""

    def __init__(self, run_dir: str, settings_json: str, ranks: list[int] | None = None,
                 begin_session: Any = None) -> None:
        """`begin_session(settings, run)`: the session to start (default: a ProfileSession)."""
        self.run_dir = run_dir
        self.settings_json = settings_json
        self.ranks = ranks
        self.begin_session = begin_session
        self.session: Any = None
        self.error: BaseException | None = None

    def start(self) -> None:
        from ..capture.session import ProfileSession
        from ..capture.settings import CaptureSettings
        from ..store import open_run

        kwargs = json.loads(self.settings_json or "{}")
        kwargs["mode"] = "script"
        kwargs["ranks"] = self.ranks  # checked again at the first step (mp.spawn sets no RANK)
        run = open_run(self.run_dir)
        if label := os.environ.get(ENV_LOSSES):  # `run --try`: the run's and each try's losses
            from ..tries.first_losses import record_first_losses

            record_first_losses(self.run_dir, label)
        if self.begin_session is not None:
            self.session = self.begin_session(CaptureSettings(**kwargs), run)
        else:
            self.session = ProfileSession(
                CaptureSettings(**kwargs), name=run.meta.name, code=run.meta.code, run=run,
                on_complete=_stop_now if os.environ.get(ENV_STOP) else None,
            ).begin()
        atexit.register(self.close)
        previous = sys.excepthook

        def excepthook(tp: Any, value: BaseException, tb: Any) -> None:
            self.error = value  # so meta.json says why the script died, not just "incomplete"
            if isinstance(value, KeyboardInterrupt):
                return  # Ctrl-C: `run` says so in one line; the script's frames tell nothing
            previous(tp, value, tb)

        sys.excepthook = excepthook

    def close(self) -> None:
        session = self.session
        if session is None or session.closed:
            return
        if not session.driver.started:
            session.discard()  # launchers and worker processes: no training steps, nothing to say
        else:
            session.finish(self.error)


def _stop_now(session: Any) -> None:
    """`--stop-after-capture`: the capture is written (trace and meta: the run is complete);
    end the command here, with status 0. Its hooks stay: torch may be iterating the optimizer
    hooks that called us, and the process ends anyway."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class _TorchImportWatcher(importlib.abc.MetaPathFinder):
    """Runs a callback right after `torch` finishes importing."""

    def __init__(self, callback: Any) -> None:
        self.callback = callback

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        loader, callback = spec.loader, self.callback
        original = loader.exec_module

        def exec_module(module: Any) -> None:
            original(module)
            callback()

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _safe_start(capture: ScriptCapture) -> None:
    try:
        capture.start()
    except Exception as e:  # noqa: BLE001 - the user's program must run even if capture cannot
        sys.stderr.write(f"jupyter_gpuprof: script capture disabled: {type(e).__name__}: {e}\n")


def install() -> ScriptCapture | None:
    """Arrange for the capture to start with torch; None outside `jupyter gpuprof run`."""
    run_dir = os.environ.get(ENV_RUN_DIR)
    if not run_dir:
        return None
    from ..capture.ranks import parse_ranks, rank_selected

    settings_json = os.environ.get(ENV_SETTINGS, "")
    fix = os.environ.get(ENV_TRY)
    if fix and "--multiprocessing-fork" in sys.argv:
        return None  # a worker the script spawned: the fix belongs to the script's process only
    if fix:  # checked before the ranks: a try process sets them to none for profile() blocks

        def begin_try(settings: Any, run: Any) -> Any:
            from ..tries.process import begin_try  # imports torch: only once the script has

            return begin_try(fix, settings, run)

        return _watch_torch(ScriptCapture(run_dir, settings_json, None, begin_try))
    if ENV_RANKS in os.environ:  # set per process (the rank under ncu gets "none")
        ranks = parse_ranks(os.environ[ENV_RANKS])
    else:
        ranks = parse_ranks(json.loads(settings_json or "{}").get("ranks"))
    if not rank_selected(ranks):
        return None  # a rank left out runs untouched: no hooks, no profiler, no files
    return _watch_torch(ScriptCapture(run_dir, settings_json, ranks))


def _watch_torch(capture: ScriptCapture) -> ScriptCapture:
    """Start the capture now if torch is already imported, else right after it is."""
    if "torch" in sys.modules:
        _safe_start(capture)
    else:
        sys.meta_path.insert(0, _TorchImportWatcher(lambda: _safe_start(capture)))
    return capture


CAPTURE = install()
