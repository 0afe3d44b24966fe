"""Where the user's own code calls torch, recorded during one warm-up step for the findings.

A trace names ops (`aten::item`), not the line that ran them; `with_stack` on every event
inflates the trace and the step. Instead, for one warm-up step (no timed step pays for it), a
`TorchFunctionMode` sees each torch call made from Python and keeps only the innermost frame
outside torch, this package and installed libraries: the user's `file:line` (a notebook
cell's own line) and the call (`item`, `norm`, `linear`…), counted. The DataLoader iterator's
`__next__` is watched the same way, so the data pipeline has a line too. The run stores the
most frequent call sites (`RunMeta.callsites`); advice/patterns.py matches them to findings.
"""

from __future__ import annotations

import linecache
import os
import sys
import sysconfig
from collections import Counter
from types import FrameType
from typing import Any

from ..store.meta_blocks import READ_BACK_CALLS, CallSiteMeta

#: most call sites kept in the run (by calls)
MAX_SITES = 300
#: longest source line kept
MAX_CODE = 160
DATA_NEXT = "DataLoader.__next__"
#: torch calls that say nothing about the user's work (attribute access, profiler ranges)
SKIP_CALLS = frozenset({"__get__", "__set__", "_record_function_enter_new",
                        "_record_function_exit._RecordFunction", "_record_function_exit"})


def _library_roots() -> tuple[str, ...]:
    """Folders whose frames are never the user's: torch, this package, installed packages."""
    roots = {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            roots.add(os.path.abspath(path))
    try:
        import torch

        roots.add(os.path.dirname(os.path.abspath(torch.__file__)))
    except ImportError:  # pragma: no cover - capture always has torch
        pass
    return tuple(sorted(roots))


def _cell_of(filename: str) -> tuple[str, int] | None:
    """('In[3]', line offset) for a notebook cell's code, else None.

    The cell is the input whose text is the code's: a `%%gpuprofile` cell runs its body
    without the magic's own line, so its frame lines are one less than the notebook shows
    (the offset adds it back), and its body may be cached under the next execution number.
    """
    try:
        from IPython import get_ipython

        shell = get_ipython()
        label = shell.compile.format_code_name(filename) if shell is not None else None
        if not label:
            return None
        number = int(str(label[1]).removeprefix("In[").removesuffix("]"))
        body = "".join(linecache.getlines(filename)).rstrip()
        history = shell.history_manager.input_hist_raw
        for k in (number, number - 1):
            raw = history[k] if 0 < k < len(history) else ""
            if raw.rstrip() == body:
                return f"In[{k}]", 0
            if raw.lstrip().startswith("%%") and raw.split("\n", 1)[-1].rstrip() == body:
                return f"In[{k}]", 1
        return str(label[1]), 0
    except Exception:  # noqa: BLE001 - only a nicer name; the file name still says it
        return None


class CallSites:
    """Counts (call, file, line) of torch calls from user code between begin() and end()."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, int]] = Counter()
        self.host_reads: Counter[tuple[str, str, int]] = Counter()
        self.gpu = False  # a GPU is in use: a read-back of a host tensor then waits for nothing
        self.error: str | None = None
        self._mode: Any = None
        self._next: Any = None
        self._pending: Any = None  # a mode end() could not take off the stack yet
        self._pending_hook: Any = None
        self._roots = _library_roots()

    def _user_frame(self, frame: FrameType | None) -> FrameType | None:
        """The innermost frame whose file is not a library's."""
        roots = self._roots
        while frame is not None:
            name = frame.f_code.co_filename
            if not name.startswith(roots) and not name.startswith("<frozen"):
                return frame
            frame = frame.f_back
        return None

    def record(self, call: str, frame: FrameType | None, args: Any = ()) -> None:
        """Count one call made (somewhere below) `frame` (with `args`, to tell a read-back of a
        host tensor, which waits for no GPU, from one of a GPU tensor)."""
        if call in SKIP_CALLS:
            return
        user = self._user_frame(frame)
        if user is not None:
            key = (call, user.f_code.co_filename, user.f_lineno)
            self.counts[key] += 1
            if self.gpu and call in READ_BACK_CALLS and _on_host(args):
                self.host_reads[key] += 1

    def begin(self) -> None:
        """Start recording (at the boundary before a warm-up step); no-op while recording."""
        if self._mode is not None:
            return
        try:
            from torch.overrides import TorchFunctionMode
            from torch.utils.data.dataloader import _BaseDataLoaderIter

            sites = self

            class _Watch(TorchFunctionMode):
                """Passes every torch call through, counting its user call site."""

                def __torch_function__(self, func: Any, types: Any, args: Any = (),
                                       kwargs: Any = None) -> Any:
                    if sites._mode is self:  # ended but still stacked: pass calls through
                        sites.record(getattr(func, "__name__", str(func)), sys._getframe(1),
                                     args)
                    return func(*args, **(kwargs or {}))

            original = _BaseDataLoaderIter.__next__

            def watched_next(it: Any) -> Any:
                sites.record(DATA_NEXT, sys._getframe(1))
                return original(it)

            import torch

            self.gpu = bool(torch.cuda.is_available() and torch.cuda.is_initialized())
            mode: Any = _Watch()
            mode.__enter__()
            self._mode = mode
            _BaseDataLoaderIter.__next__ = watched_next  # type: ignore[method-assign,assignment]
            self._next = (_BaseDataLoaderIter, original)
        except Exception as e:  # noqa: BLE001 - call sites are optional; say why they are missing
            self.error = f"call sites unavailable: {type(e).__name__}: {e}"

    def end(self) -> None:
        """Stop recording and take the mode off torch's mode stack (now, or at the next module
        call when end() runs inside the mode's own handler); idempotent."""
        mode, self._mode = self._mode, None
        patched, self._next = self._next, None
        if patched is not None:
            cls, original = patched
            cls.__next__ = original
        if mode is not None:
            self._leave(mode)

    def _leave(self, mode: Any) -> None:
        """Exit `mode` if it is on top of the stack, else wait for a moment where it is.

        A step boundary can run inside the mode's handler: a loop that steps at each
        `loss.backward()` ends its step inside `Tensor.backward`, which torch dispatched to the
        mode with the mode taken off the stack for the handler's duration and pushed back when
        the handler returns. Exiting there pops nothing of ours, and the mode would then watch
        every torch call of every later step (a Python call and a frame walk per op: the
        baseline of a 5 ms step ran ~1 ms slower). A module's forward pre-hook runs outside any
        torch handler, so the next module call exits it.
        """
        try:
            from torch.overrides import _get_current_function_mode_stack

            stack = _get_current_function_mode_stack()
            if stack and stack[-1] is mode:
                mode.__exit__(None, None, None)
                self._drop_pending()
                return
            if self._pending_hook is None:
                import torch
                from torch.nn.modules.module import register_module_forward_pre_hook

                hook = torch.compiler.disable(self._leave_pending)
                self._pending_hook = register_module_forward_pre_hook(hook)
            self._pending = mode
        except Exception as e:  # noqa: BLE001
            self.error = f"call sites failed: {type(e).__name__}: {e}"

    def _leave_pending(self, module: Any, args: Any) -> None:
        """Forward pre-hook: exit the mode end() left stacked, once it is on top again."""
        from torch.overrides import _get_current_function_mode_stack

        mode = self._pending
        if mode is not None and mode in _get_current_function_mode_stack():
            self._leave(mode)
        else:  # someone else took it off: nothing left to wait for
            self._drop_pending()

    def _drop_pending(self) -> None:
        hook, self._pending_hook, self._pending = self._pending_hook, None, None
        if hook is not None:
            hook.remove()

    @property
    def active(self) -> bool:
        return self._mode is not None

    def result(self) -> list[CallSiteMeta]:
        """The most frequent call sites: call, file (or notebook cell), line, code, calls."""
        out: list[CallSiteMeta] = []
        for (call, filename, line), calls in self.counts.most_common(MAX_SITES):
            code = linecache.getline(filename, line).strip()[:MAX_CODE]
            cell = _cell_of(filename)
            site: CallSiteMeta = {"call": call, "file": cell[0] if cell else filename,
                                  "line": line + (cell[1] if cell else 0), "code": code,
                                  "calls": calls, "cell": cell is not None}
            if host := self.host_reads.get((call, filename, line)):
                site["host_reads"] = host
            out.append(site)
        return out


def _on_host(args: Any) -> bool:
    """Whether a call's tensor (its first argument) is in host memory."""
    t = args[0] if args else None
    device = getattr(t, "device", None)
    return getattr(device, "type", None) == "cpu"
