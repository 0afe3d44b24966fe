"""Profile PyTorch training steps from Jupyter (%%gpuprofile) or scripts (profile(), `jupyter gpuprof run`).

Imports are lazy: importing the package must not import torch (the server extension loads it too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from .capture.session import ProfileSession


def _read_version() -> str:
    try:
        from ._version import __version__ as v  # written by the build

        return str(v)
    except ImportError:
        pass
    try:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("jupyter_gpuprof")
        except PackageNotFoundError:
            return "0.0.0"
    except ImportError:
        return "0.0.0"


__version__ = _read_version()


def profile(*args: Any, **kwargs: Any) -> AbstractContextManager[ProfileSession]:
    """Context manager profiling the training loop inside it (see capture.session.profile)."""
    from .capture.session import profile as _profile

    return _profile(*args, **kwargs)


def step() -> None:
    """Mark the end of a training step for the running capture; a no-op when nothing is captured."""
    from .capture.session import step as _step

    _step()


def load_ipython_extension(ip: Any) -> None:
    """`%load_ext jupyter_gpuprof`: register %%gpuprofile."""
    from .capture.magics import load_ipython_extension as _load

    _load(ip)


def _jupyter_labextension_paths():  # type: ignore[no-untyped-def]
    return [{"src": "labextension", "dest": "jupyter-gpuprof"}]


def _jupyter_server_extension_points():  # type: ignore[no-untyped-def]
    return [{"module": "jupyter_gpuprof"}]


def _load_jupyter_server_extension(server_app):  # type: ignore[no-untyped-def]
    from .server.extension import load

    load(server_app)


__all__ = ["__version__", "load_ipython_extension", "profile", "step"]
