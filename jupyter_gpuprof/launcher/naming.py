"""A run's default name from its command line: the script and the arguments that tell runs of it
apart ("train train_gpt2 batch_size=8 dtype=bfloat16"), not the script alone ("train" ×3)."""

from __future__ import annotations

from pathlib import Path

#: a name longer than this is cut at a word, with an ellipsis (the sidebar row's width)
MAX_NAME_CHARS = 60


def _program_and_args(cmd: list[str]) -> tuple[str, list[str]]:
    """The script (or module, or program) the command runs, and the arguments it was given."""
    for i, part in enumerate(cmd):
        if part.endswith(".py"):
            return Path(part).stem, cmd[i + 1:]
        if part == "-m" and i + 1 < len(cmd):
            return cmd[i + 1].rsplit(".", 1)[-1], cmd[i + 2:]
    return (Path(cmd[0]).name, cmd[1:]) if cmd else ("run", [])


def _is_option(arg: str) -> bool:
    """`--key`, `-k`; not a negative number (`-1`)."""
    return arg.startswith("-") and len(arg) > 1 and not arg[1:2].isdigit()


def _words(args: list[str]) -> list[str]:
    """Arguments as short words: a path as its stem, `--key value` and `--key=value` as
    `key=value`, a bare flag as its name."""
    words: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if _is_option(arg):
            key, eq, value = arg.lstrip("-").partition("=")
            nxt = args[i + 1] if i + 1 < len(args) else None
            if not eq and nxt is not None and not _is_option(nxt):
                value, eq, i = nxt, "=", i + 1
            words.append(f"{key}={_short(value)}" if eq else key)
        else:
            words.append(_short(arg))
        i += 1
    return [w for w in words if w]


def _short(value: str) -> str:
    """A path argument as its file's stem (config/train_gpt2.py -> train_gpt2)."""
    return Path(value).stem if "/" in value or value.endswith((".py", ".yaml", ".json")) \
        else value


def run_name(cmd: list[str], limit: int = MAX_NAME_CHARS) -> str:
    """The name `jupyter gpuprof run` gives a run when `--name` is not given."""
    program, args = _program_and_args(cmd)
    name = program
    for word in _words(args):
        if len(name) + 1 + len(word) > limit:
            return name + " …"
        name += " " + word
    return name
