"""Text bound for a terminal, with its control characters made visible; the one writer of it.

Kernel, op and thread names, run names, source lines and a try's error come from files anyone
can write: an escape sequence in one of them would clear the screen, retitle the window or
forge a hyperlink when printed raw. A leaf module (nothing of ours) so every edge can use it.
"""

from __future__ import annotations

import re
import sys

#: C0 controls but newline and tab, DEL, and the C1 controls (U+0080-U+009F: a lone U+009B
#: is a CSI to terminals that read 8-bit controls)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with every control character but newline and tab shown as `\\xNN` (ESC reads
    `\\x1b`): nothing a terminal would act on is left, and what was there can still be read."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def say(*parts: object, err: bool = False, flush: bool = False) -> None:
    """`print` for a terminal: the parts made `visible`, to stdout (stderr with `err`)."""
    print(visible(" ".join(map(str, parts))), file=sys.stderr if err else sys.stdout,
          flush=flush)
