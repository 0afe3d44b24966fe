"""graphs: `compile` with mode='reduce-overhead', whose CUDA graphs replay the step's launches."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from . import compile as compile_fix

MODE = "reduce-overhead"


def notebook(ns: dict[str, object], step: Callable[[], object],
             cuda: bool) -> contextlib.AbstractContextManager[Callable[[], object]]:
    """The step with its modules compiled into CUDA graphs."""
    return compile_fix.compiled(ns, step, MODE)


class Startup(compile_fix.Startup):
    """The script's trained modules compiled with mode='reduce-overhead'."""

    name = "graphs"
    mode = MODE
