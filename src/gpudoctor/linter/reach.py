"""Which of a file's functions and classes run when the file runs: reachability from the module's entry.

An error is certain only on the path the script runs (issue 41, item 2). That path starts at the module's
entry: its module-level code (the `if __name__ == "__main__":` block among it) and, transitively within the
file, the functions and classes it names: called, passed on (`mp.spawn(worker, ...)`, a callback), built (every
method of a class the running code names runs through its instances), a base of such a class, a function a
decorator of its own may register (`@app.command()`, `@register`), a name a string holds (`__all__`, a registry
keyed by name). A function or class nothing of that reaches runs only when another program imports and calls it:
the line fails then, not when this script runs (lint heldout30 u005: `resnet18` read in the `__init__` of a VAE2D
nothing builds; the only mention of VAE2D outside its `class` line is `super(VAE2D, self)` in its own body).

Decided only for a file that is a program by its own evidence: it has a main block, loops at module level, or
ends by calling a function it defines. A module of definitions alone (a library: its importers are its entry) and
a file that binds or calls by computed names (`globals()`, `eval`, `fire.Fire()` with no target) are not decided.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


class FileModel(Protocol):
    """What reachability reads of a file (the linter's model.FileModel has all of it; typed here by what is read, so
    that the model, which asks this module, and this module import no circle)."""

    @property
    def tree(self) -> ast.Module: ...

    @property
    def text(self) -> str: ...

    @property
    def defs(self) -> Mapping[tuple[ast.AST, str], list[Definition]]: ...

    @property
    def calls(self) -> list[ast.Call]: ...

    def find_def(self, name: ast.Name) -> list[Definition]: ...

    def method_class(self, node: ast.AST) -> ast.ClassDef | None: ...

    def method(self, cls: ast.ClassDef, name: str, _depth: int = 0) -> ast.FunctionDef | ast.AsyncFunctionDef | None: ...

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]: ...

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Decorators that wrap a function and register it nowhere: a function so decorated runs only when called.
WRAPPERS = frozenset({"no_grad", "inference_mode", "enable_grad", "lru_cache", "cache", "wraps", "staticmethod",
                      "classmethod", "property", "cached_property", "abstractmethod", "contextmanager", "dataclass",
                      "overload", "script", "compile", "autocast", "record", "jit", "njit", "setter", "getter",
                      "total_ordering", "custom_fwd", "custom_bwd", "torch_function"})
# Calls that reach a module's functions by a computed name (`vars()` with no argument: `vars(args)` reads a namespace).
DYNAMIC_CALLS = frozenset({"globals", "locals", "vars", "eval", "exec", "__import__"})


@dataclass(frozen=True)
class Unreached:
    """A line the module's entry never reaches: the outermost function or class around it that nothing the file
    runs reaches, and the places outside it that name it (all in code that never runs either)."""

    definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    callers: tuple[ast.AST, ...]
    owners: tuple[str, ...]  # the functions (or classes) that hold those places, in order

    @property
    def words(self) -> str:
        """When the line would fail: `it runs only when `VAE2D` is built, and nothing in this file builds it`."""
        cls = type(self.definition) is ast.ClassDef
        name = self.definition.name if cls else f"{self.definition.name}()"
        verb = "builds" if cls else "calls"
        head = f"it runs only when `{name}` is {'built' if cls else 'called'}"
        if not self.callers:
            return f"{head}, and nothing in this file {verb} it"
        first = self.callers[0]
        return (f"{head}, and only `{self.owners[0]}` (line {getattr(first, 'lineno', '?')}) {verb} it, which "
                "nothing this script runs reaches")


class Reach:
    """The definitions (functions, classes) reached from the module's entry (see the module's docstring)."""

    def __init__(self, file: FileModel) -> None:
        self.file = file
        self.reached: set[ast.AST] = set()
        self._todo: list[ast.AST] = []
        self._names = {name for _, name in file.defs}
        self._said: dict[ast.AST, Unreached] = {}  # per outermost unreached definition (one walk each)
        self._run()

    def _run(self) -> None:
        file = self.file
        self._scan(file.tree.body)
        # a string that holds a definition's name (`__all__`, a registry keyed by name, getattr by name)
        for node in ast.walk(file.tree):
            if type(node) is ast.Constant and isinstance(node.value, str) and node.value in self._names:
                for d in self._top_defs(node.value):
                    self._reach(d)
        while self._todo:
            node = self._todo.pop()
            if isinstance(node, DEFS):
                self._scan(node.body)
            elif type(node) is ast.ClassDef:
                self._scan(node.body)
                for stmt in node.body:  # every method runs through the instances of a class the program names
                    if isinstance(stmt, DEFINITIONS):
                        self._reach(stmt)
                for base in node.bases:
                    self._scan([base])

    def _top_defs(self, name: str) -> list[ast.AST]:
        return [d for (scope, n), found in self.file.defs.items() if n == name and scope is self.file.tree
                for d in found]

    def _reach(self, node: ast.AST) -> None:
        if node not in self.reached:
            self.reached.add(node)
            self._todo.append(node)

    def _scan(self, stmts: Iterable[ast.AST]) -> None:
        """Reach what the code `stmts` names, not descending into the bodies of the definitions it holds (they run
        when named): their decorators, defaults and bases run where they stand."""
        file = self.file
        stack = list(stmts)
        while stack:
            node = stack.pop()
            if isinstance(node, DEFINITIONS):
                stack.extend(node.decorator_list)
                if isinstance(node, DEFS):
                    stack.extend(d for d in (*node.args.defaults, *node.args.kw_defaults) if d is not None)
                else:
                    stack.extend(node.bases)
                    stack.extend(k.value for k in node.keywords)
                    # a class body runs where the class statement stands; its methods when it is built
                    stack.extend(s for s in node.body if not isinstance(s, DEFINITIONS))
                if any(not _wrapper(d) for d in node.decorator_list):
                    self._reach(node)  # a decorator of its own may register it
                continue
            if type(node) is ast.Name and type(node.ctx) is ast.Load and node.id in self._names:
                for d in file.find_def(node):
                    self._reach(d)
            elif type(node) is ast.Attribute and node.attr in self._names and type(node.ctx) is ast.Load:
                cls = file.method_class(node)  # `self.helper()`: the method of the class around it
                method = file.method(cls, node.attr) if cls is not None else None
                if method is not None:
                    self._reach(method)
            stack.extend(ast.iter_child_nodes(node))

    def unreached(self, node: ast.AST) -> Unreached | None:
        """The outermost definition around `node` that the entry never reaches, with what names it; None where the
        line is reached (or `node` is no definition's)."""
        file = self.file
        outermost: ast.AST | None = None
        for anc in [node, *file.ancestors(node)]:
            if isinstance(anc, DEFINITIONS) and anc is not node and anc not in self.reached:
                outermost = anc
        if outermost is None:
            return None
        assert isinstance(outermost, DEFINITIONS)
        known = self._said.get(outermost)
        if known is not None:
            return known
        inside = {id(n) for n in ast.walk(outermost)}
        callers: list[ast.AST] = []
        for n in ast.walk(file.tree):
            if id(n) in inside:
                continue
            named = type(n) is ast.Name and n.id == outermost.name and outermost in file.find_def(n)
            if type(n) is ast.Attribute and n.attr == outermost.name and type(outermost) is not ast.ClassDef:
                cls = file.method_class(n)
                named = cls is not None and file.method(cls, n.attr) is outermost
            if named:
                callers.append(n)
        callers.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
        owners = tuple(_owner(file, c) for c in callers)
        found = self._said[outermost] = Unreached(outermost, tuple(callers), owners)
        return found


def _owner(file: FileModel, node: ast.AST) -> str:
    """The outermost definition around `node`, as a reader names it (`legacy_train()`, `VAE2D`)."""
    found = "module-level code"
    for anc in file.ancestors(node):
        if isinstance(anc, DEFS):
            found = f"{anc.name}()"
        elif type(anc) is ast.ClassDef:
            found = anc.name
    return found


def _wrapper(decorator: ast.expr) -> bool:
    """A decorator that only wraps (`@torch.no_grad()`, `@staticmethod`, `@dataclass`)."""
    node = decorator.func if type(decorator) is ast.Call else decorator
    name = node.attr if type(node) is ast.Attribute else node.id if type(node) is ast.Name else ""
    return name in WRAPPERS


def is_program(file: FileModel) -> bool:
    """The file runs as a program by its own evidence: a main block, a loop at module level, or a last statement
    that calls a function it defines; and it reaches nothing by a computed name."""
    body = file.tree.body
    main = any(type(s) is ast.If and "__main__" in ast.unparse(s.test) for s in body)
    loop = any(isinstance(s, (ast.For, ast.AsyncFor, ast.While)) for s in body)
    last = body[-1] if body else None
    call = last.value if type(last) is ast.Expr else None
    runs_itself = type(call) is ast.Call and type(call.func) is ast.Name and any(
        isinstance(s, DEFS) and s.name == call.func.id for s in body)
    if not (main or loop or runs_itself):
        return False
    for c in file.calls:
        func = c.func  # (a bare name: `model.eval()` is no `eval`)
        if (type(func) is ast.Name and func.id in DYNAMIC_CALLS and not (func.id == "vars" and c.args)) or (
                (getattr(func, "attr", None) == "Fire" or getattr(func, "id", None) == "Fire")
                and not c.args and not c.keywords):
            return False
    return "sys.modules[__name__]" not in file.text
