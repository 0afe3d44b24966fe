"""The warm-up step that FLOPs and call sites are probed on runs eagerly: compiled code stays so.

FLOP counting is a TorchDispatchMode and call-site recording a TorchFunctionMode. Dynamo does
not leave compiled code alone under either: under the dispatch mode it marks the compiled
function's code as skipped for good, so every later step, the profiled ones too, runs eagerly
(torch 2.13, CPU: after one such step no step had a compiled region again); under the function
mode it compiles new graphs with breaks. With the compiler's `force_eager` stance for that one
step Dynamo looks at nothing, and the probes see the ops an eager step runs, the same maths.
"""

from __future__ import annotations

from typing import Any

from .training import compiled_graphs

#: why the probes were skipped on a torch too old to run one step eagerly
NO_STANCE = ("FLOPs and call sites not recorded: the model is compiled and this torch has no "
             "torch.compiler.set_stance to probe one step eagerly (torch >= 2.6 has it)")


class EagerProbeStep:
    """Holds torch.compiler's force_eager stance from begin() to end(), restoring the user's."""

    def __init__(self) -> None:
        self._stance: Any = None
        self.skipped: str | None = None  # why begin() declined, for the run's meta

    def begin(self) -> bool:
        """Enter force_eager; False when compiled code is in use and no stance can protect it."""
        self.end()
        try:
            import torch

            set_stance = getattr(torch.compiler, "set_stance", None)
            if set_stance is not None:
                self._stance = set_stance("force_eager")  # takes effect now; __exit__ restores
                return True
        except Exception:  # noqa: BLE001, S110 - judged below like a torch without stances
            pass
        if compiled_graphs() > 0:
            self.skipped = NO_STANCE
            return False
        return True  # nothing compiled to protect

    def end(self) -> None:
        """Give the compiler back the stance it had before begin()."""
        stance, self._stance = self._stance, None
        if stance is not None:
            stance.__exit__(None, None, None)

    @property
    def active(self) -> bool:
        return self._stance is not None
