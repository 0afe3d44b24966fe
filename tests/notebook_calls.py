"""What a notebook calls of ours, checked against the code without running it.

A GPU notebook cannot run on a CPU machine, so its code is read instead: every attribute of a
report, every summary key read from `to_json()`, every `%%gpuprofile` / `%ncu` option and every
`jupyter gpuprof` flag it uses must still exist, so a rename fails a test rather than a user.
Types come from the code's own annotations (the Report's attributes and properties, the advice's
dataclasses, the summary's msgspec structs); what the code does not type is not guessed.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import shlex
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
from IPython.core.inputtransformer2 import TransformerManager
from IPython.core.magic_arguments import parse_argstring
from notebook_types import (
    DICT_METHODS,
    PACKAGE,
    UNKNOWN,
    Iterable,
    Keyed,
    Method,
    as_keyed,
    hints_of,
    is_ours,
    is_struct,
    item_of,
    member,
    strip_optional,
)

import jupyter_gpuprof
from jupyter_gpuprof.cli import build_parser
from jupyter_gpuprof.magics import GpuProfMagics
from jupyter_gpuprof.ncu.magic import parser as ncu_parser
from jupyter_gpuprof.ncu.magic import split_line
from jupyter_gpuprof.ncu.results import NcuResults
from jupyter_gpuprof.report import build
from jupyter_gpuprof.report.model import Summary

#: cell magics whose body is Python (checked like any cell)
PYTHON_BODIES = {"gpuprofile", "ncu", "time", "timeit", "capture"}
#: calls whose result is a Report although their annotation cannot say so without importing it
REPORT_FACTORIES = {"analyze", "analyze_path", "analyze_run", "analyze_trace"}


@dataclass(frozen=True)
class Problem:
    """One name the notebook uses that the code no longer has."""

    cell: int
    line: int
    text: str

    def __str__(self) -> str:
        return f"cell {self.cell}, line {self.line}: {self.text}"


@dataclass
class NotebookCalls:
    """The outcome for one notebook: what was checked against a type, and what was missing."""

    problems: list[Problem] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # e.g. "Report.step_table", "Summary.steps"
    magics: list[str] = field(default_factory=list)  # magic and CLI lines parsed


class _Cell:
    """Types the expressions of one cell, in order, against the notebook's names so far."""

    def __init__(self, env: dict[str, Any], out: NotebookCalls, cell: int) -> None:
        self.env, self.out, self.cell = env, out, cell

    def problem(self, node: ast.AST, text: str) -> None:
        self.out.problems.append(Problem(self.cell, getattr(node, "lineno", 0), text))

    # statements -------------------------------------------------------------------------
    def run(self, code: str) -> None:
        try:
            tree = ast.parse(code)
        except SyntaxError as e:
            self.problem(ast.Module(), f"does not parse: {e}")
            return
        self.block(tree.body)

    def block(self, body: list[ast.stmt]) -> None:
        for stmt in body:
            self.stmt(stmt)

    def stmt(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            t = self.type_of(node.value)
            for target in node.targets:
                self.bind(target, t)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.bind(node.target, item_of(self.type_of(node.iter)))
            self.block(node.body + node.orelse)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imports(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.env[node.name] = UNKNOWN  # bodies run later, with arguments we cannot type
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self.stmt(child)
                elif isinstance(child, ast.expr):
                    self.type_of(child)
            if isinstance(node, ast.With):
                for item in node.items:
                    if item.optional_vars is not None:
                        self.bind(item.optional_vars, UNKNOWN)

    def bind(self, target: ast.expr, t: Any) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = t
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind(elt, UNKNOWN)
        else:
            self.type_of(target)

    def imports(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                ours = alias.name.split(".")[0] == PACKAGE
                value = self.module(node, alias.name) if ours else UNKNOWN
                self.env[alias.asname or alias.name.split(".")[0]] = (
                    value if alias.asname else (jupyter_gpuprof if ours else UNKNOWN))
            return
        if not (node.module or "").startswith(PACKAGE):
            for alias in node.names:
                self.env[alias.asname or alias.name] = UNKNOWN
            return
        mod = self.module(node, node.module or PACKAGE)
        for alias in node.names:
            value = getattr(mod, alias.name, UNKNOWN) if mod is not UNKNOWN else UNKNOWN
            if mod is not UNKNOWN and not hasattr(mod, alias.name):
                self.problem(node, f"{node.module} has no {alias.name}")
            self.out.checked.append(f"{node.module}.{alias.name}")
            self.env[alias.asname or alias.name] = value

    def module(self, node: ast.AST, name: str) -> Any:
        try:
            return importlib.import_module(name)
        except ImportError:
            self.problem(node, f"no module {name}")
            return UNKNOWN

    # expressions ------------------------------------------------------------------------
    def type_of(self, node: ast.expr) -> Any:
        """The type of `node`, checking every name of ours it reaches."""
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is not None:
            return handler(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.type_of(child)
            elif isinstance(child, ast.comprehension):
                self.type_of(child.iter)
        return UNKNOWN

    def expr_Name(self, node: ast.Name) -> Any:
        return self.env.get(node.id, UNKNOWN)

    def expr_Attribute(self, node: ast.Attribute) -> Any:
        base = self.type_of(node.value)
        if isinstance(base, types.ModuleType):
            if not base.__name__.startswith(PACKAGE):
                return UNKNOWN
            self.out.checked.append(f"{base.__name__}.{node.attr}")
            if not hasattr(base, node.attr):
                self.problem(node, f"{base.__name__} has no {node.attr}")
                return UNKNOWN
            return getattr(base, node.attr)
        if isinstance(base, Keyed):
            if node.attr in DICT_METHODS:
                return Method(base, node.attr)
            self.problem(node, f"{node.attr!r}: the summary from to_json() is a dict; read it "
                               "by key")
            return UNKNOWN
        cls = strip_optional(base)
        if not is_ours(cls):
            return UNKNOWN
        found, t = member(cls, node.attr)
        self.out.checked.append(f"{cls.__name__}.{node.attr}")
        if not found:
            self.problem(node, f"{cls.__name__} has no attribute {node.attr!r}")
            return UNKNOWN
        return t

    def expr_Call(self, node: ast.Call) -> Any:
        func = self.type_of(node.func)
        args = [self.type_of(a) for a in node.args]
        for kw in node.keywords:
            self.type_of(kw.value)
        if isinstance(node.func, ast.Name) and node.func.id == "next" and args:
            return item_of(args[0])
        if isinstance(func, Method):
            if func.name == "to_json" and func.owner is build.Report:
                return Keyed(Summary)  # the summary model, encoded
            if isinstance(func.owner, Keyed):
                return self.key(node, func.owner, node.args[0]) if func.name == "get" and \
                    node.args else UNKNOWN
            fn = inspect.getattr_static(func.owner, func.name)
            return hints_of(fn).get("return", UNKNOWN)
        if callable(func) and getattr(func, "__module__", "").startswith(PACKAGE):
            if getattr(func, "__name__", "") in REPORT_FACTORIES:
                return build.Report
            return hints_of(func).get("return", UNKNOWN)
        return UNKNOWN

    def key(self, node: ast.AST, keyed: Keyed, key: ast.expr) -> Any:
        """The type of `d[key]` / `d.get(key)` on a summary dict."""
        t = strip_optional(keyed.type)
        if typing.get_origin(t) in (list, tuple):
            return item_of(keyed)
        if not (is_struct(t) and isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return UNKNOWN
        found, ft = member(t, key.value)
        self.out.checked.append(f"{t.__name__}[{key.value!r}]")
        if not found:
            self.problem(node, f"the summary's {t.__name__} has no key {key.value!r}")
            return UNKNOWN
        return as_keyed(ft)

    def expr_Subscript(self, node: ast.Subscript) -> Any:
        if self.is_globals(node.value):
            return self.global_lookup(node.slice)
        base = self.type_of(node.value)
        self.type_of(node.slice)
        if isinstance(base, Keyed):
            return self.key(node, base, node.slice)
        stripped = strip_optional(base)
        if typing.get_origin(stripped) in (list, tuple):
            return item_of(stripped)
        return UNKNOWN

    @staticmethod
    def is_globals(node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id == "globals"

    def global_lookup(self, key: ast.expr) -> Any:
        """`globals()[f"r_{n}"]`: a name bound before whose spelling the f-string starts."""
        first = key.values[0] if isinstance(key, ast.JoinedStr) and key.values else None
        if isinstance(first, ast.Constant):
            prefix = str(first.value)
            found = {repr(t): t for name, t in self.env.items() if name.startswith(prefix)}
            if len(found) == 1:
                return next(iter(found.values()))
        return UNKNOWN

    def expr_IfExp(self, node: ast.IfExp) -> Any:
        self.type_of(node.test)
        body, other = self.type_of(node.body), self.type_of(node.orelse)
        return body if body is not UNKNOWN and not isinstance(node.body, ast.Dict) else other

    def expr_BoolOp(self, node: ast.BoolOp) -> Any:
        out = UNKNOWN
        for v in node.values:
            t = self.type_of(v)
            if out is UNKNOWN and not isinstance(v, (ast.Dict, ast.Constant)):
                out = t
        return out

    def comprehension(self, node: Any, elts: list[ast.expr]) -> Any:
        saved = dict(self.env)
        try:
            for gen in node.generators:
                self.bind(gen.target, item_of(self.type_of(gen.iter)))
                for cond in gen.ifs:
                    self.type_of(cond)
            return Iterable([self.type_of(e) for e in elts][0])
        finally:
            self.env = saved

    def expr_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self.comprehension(node, [node.elt])

    expr_ListComp = expr_SetComp = expr_GeneratorExp

    def expr_DictComp(self, node: ast.DictComp) -> Any:
        return self.comprehension(node, [node.key, node.value])


class _Magics:
    """The magic and shell lines of a cell: parsed with the parsers the magics use."""

    def __init__(self, cell: _Cell) -> None:
        self.cell = cell

    def calls(self, code: str) -> str:
        """`code` with its magics checked; returns the Python the cell magics run (their bodies,
        themselves checked for magics)."""
        tree = ast.parse(code)
        bodies: list[str] = []
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if node.func.attr == "run_cell_magic" and len(args) == 3:
                self.magic(node, str(args[0]), str(args[1]))
                if args[0] in PYTHON_BODIES:
                    body = TransformerManager().transform_cell(str(args[2]))
                    bodies += [self.calls(body), body]
            elif node.func.attr == "run_line_magic" and len(args) == 2:
                self.magic(node, str(args[0]), str(args[1]))
            elif node.func.attr in ("system", "getoutput") and len(args) == 1:
                self.shell(node, str(args[0]))
        return "\n".join(bodies)

    def magic(self, node: ast.AST, name: str, line: str) -> None:
        out = self.cell.out
        if name == "gpuprofile":
            out.magics.append(f"%%gpuprofile {line}")
            try:
                args = parse_argstring(GpuProfMagics.gpuprofile, line)
            except Exception as e:  # noqa: BLE001 - UsageError, with the parser's own words
                self.cell.problem(node, f"%%gpuprofile {line}: {e}")
                return
            self.cell.env[args.output] = build.Report
        elif name == "ncu":
            out.magics.append(f"%ncu {line}")
            ours, _rest = split_line(line)
            try:
                args = ncu_parser().parse_args(ours)
            except Exception as e:  # noqa: BLE001 - UsageError, with the parser's own words
                self.cell.problem(node, f"%ncu {line}: {e}")
                return
            self.cell.env[args.output] = NcuResults

    def shell(self, node: ast.AST, command: str) -> None:
        words = shlex.split(command)
        if words[:2] != ["jupyter", "gpuprof"]:
            return
        self.cell.out.magics.append(command)
        try:
            build_parser().parse_args(words[2:])
        except SystemExit:
            self.cell.problem(node, f"!{command}: the CLI refuses these arguments")


def check_notebook(path: Path | str) -> NotebookCalls:
    """Every name of ours the notebook's code cells use, checked in cell order."""
    nb = nbformat.read(str(path), as_version=4)
    out = NotebookCalls()
    env: dict[str, Any] = {}
    transform = TransformerManager().transform_cell
    for i, c in enumerate(nb.cells):
        if c.cell_type != "code":
            continue
        cell = _Cell(env, out, i)
        code = transform(c.source)
        try:
            body = _Magics(cell).calls(code)
        except SyntaxError as e:
            cell.problem(ast.Module(), f"does not parse: {e}")
            continue
        cell.run(body)
        cell.run(code)
    return out
