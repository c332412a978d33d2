"""What the rules know about the program around one file.

`gpudoctor lint DIR` lints a folder as one project: while each file is
parsed (once), the engine writes down a few facts about it (`ModuleFacts`:
what it imports, whether it binds a GPU or calls `set_epoch`, which of its
functions make a collective, which names its `__main__` block calls). A rule
that needs "somewhere in the program" does not guess: it returns its hit with
a `Query`, and once every file is read the `Project` answers it. The facts
are small frozen values, so files can be read in parallel processes.

Modules are matched by name the way Python would find them from the script's
folder: `import utils` in `a/b/train.py` is the nearest `utils.py` (or
`utils/__init__.py`); `from .x import y` is resolved against the file's own
package. A file linted alone is a project of one: every answer comes from
that file, as before.
"""

from __future__ import annotations

import ast
import bisect
import os
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from gpudoctor.linter.model import DEFS, LIBRARIES, MAIN_TEST, FileModel, constant, terminal_name

# Text that shows a file binds each process to its GPU.
DEVICE_BINDERS = ("set_device", "CUDA_VISIBLE_DEVICES", "torch.cuda.device(", "set_default_device")
# ... or names each rank's GPU wherever it puts a tensor: `torch.device("cuda", rank)`,
# `f"cuda:{local_rank}"`, `"cuda:%d" % gpu`, `"cuda:{}".format(gpu)`, `"cuda:" + str(gpu)`.
PER_RANK_DEVICE = re.compile(r"""cuda:(?:\{|%d|['"]\s*\+)""")
DEVICE_CALL = re.compile(r"""cuda['"]\s*,""")
DEVICE_BEFORE = re.compile(r"""device\(\s*['"]$""")


def names_device_per_rank(text: str) -> bool:
    """`torch.device("cuda", rank)`, `f"cuda:{rank}"`, `"cuda:{}".format(...)`,
    `"cuda:%d" % gpu`, `"cuda:" + str(gpu)` somewhere in `text`: looked for
    only where "cuda" is (scanning the whole text for a pattern costs as
    much as parsing it)."""
    at = text.find("cuda")
    while at >= 0:
        if PER_RANK_DEVICE.match(text, at):
            return True
        if DEVICE_CALL.match(text, at) and DEVICE_BEFORE.search(text, max(0, at - 16), at):
            return True
        at = text.find("cuda", at + 4)
    return False
# A file may make a collective only if it mentions one of these.
COLLECTIVE_NEEDLES = ("barrier", "all_reduce", "broadcast", "gather", "reduce", "scatter", "all_to_all",
                      "wait_for_everyone", "new_group", "rendezvous")
# ... and imports one of these.
COMMUNICATORS = ("torch.distributed", "accelerat", "torch_xla", "from torch import distributed")
# Packages whose functions are never the project's own.
BLOCKS = {ast.If, ast.Try, ast.With, ast.ExceptHandler}
# How many folders up a module name may start (`a.b.c.utils`).
NAME_DEPTH = 6
CALL_TAIL = re.compile(r"((?:\.\w+)*)[ \t]*\(")
# How many modules a call is followed through to find a collective (`train.py` -> `engine.py` -> `dist_utils.py`).
CALL_DEPTH = 3


@dataclass(frozen=True)
class Query:
    """A question a hit asks the project before it is reported.

    kind "no-device-binding": keep the hit if no module of the program binds
    a GPU; "no-set-epoch": if none calls `set_epoch`; "reaches-collective":
    if the function `name` (as the file imports it) makes a collective, whose
    description replaces `{reached}` in the message; "not-rank-guard": if
    the function or flag `name` is not computed from the rank;
    "calls-argument": if the function `name` calls the argument `arg` it is
    given (a model's forward); "not-in-view": if no module linted with the file
    holds the function `name` (what it does is not in view)."""

    kind: str
    name: str = ""
    arg: str = ""  # "calls-argument": the argument passed, its position ("0") or keyword


@dataclass(frozen=True)
class ModuleFacts:
    path: str
    imports: tuple[str, ...] = ()  # dotted names as written; relative ones keep their leading dots
    binds_device: bool = False
    sets_epoch: bool = False
    main_calls: frozenset[str] = frozenset()  # names called under `if __name__ == "__main__":`
    # top-level function -> (collective, line) it makes on every rank that calls it
    collectives: dict[str, tuple[str, int]] = field(default_factory=dict)
    # top-level function -> the functions of other modules it calls (dotted names as the file imports them);
    # "" holds the calls made outside the top-level functions
    calls: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # top-level functions and variables computed from the rank: `def is_master(): return get_rank() == 0`
    guards: frozenset[str] = frozenset()
    # top-level function -> the parameters named like a model it calls: (position, name)
    forwards: dict[str, tuple[tuple[int, str], ...]] = field(default_factory=dict)


def module_facts(path: str, tree: ast.Module, text: str, model: FileModel | None) -> ModuleFacts:
    """The facts of one parsed file. `model` is the file's FileModel when
    the engine built one; it is built here only for files that may make a
    collective."""
    main_calls: set[str] = set()
    for stmt in tree.body:
        if type(stmt) is ast.If and _is_main_test(stmt.test):
            main_calls |= {terminal_name(n.func) for s in stmt.body for n in ast.walk(s) if type(n) is ast.Call}
    imports = _imports(tree) if model is None else _model_imports(model)
    collectives: dict[str, tuple[str, int]] = {}
    if any(n in text for n in COMMUNICATORS) and any(n in text for n in COLLECTIVE_NEEDLES):
        from gpudoctor.linter.ranks import collective_reach, direct_collectives

        if model is not None:
            for func, (call, name) in collective_reach(model).items():
                if isinstance(func, DEFS) and model.parent.get(func) is tree:  # top level: what other modules can import
                    collectives[func.name] = (name, call.lineno)
        else:  # no rule needed the full model: a light look at the top-level functions
            collectives = direct_collectives(tree, text)
    return ModuleFacts(
        path=path,
        imports=tuple(dict.fromkeys(i for i in imports if i.strip("."))),
        binds_device=any(b in text for b in DEVICE_BINDERS) or names_device_per_rank(text),
        sets_epoch="set_epoch" in text,
        main_calls=frozenset(main_calls),
        collectives=collectives,
        calls=_project_calls(tree, text),
        guards=_guards(tree) if "rank" in text or "RANK" in text else frozenset(),
        forwards=_forwards(tree, text) if "model" in text or "net" in text else {},
    )


# A helper that decides on the rank is short: longer functions are not read.
GUARD_LINES = 12


def _guards(tree: ast.Module) -> frozenset[str]:
    """Top-level names computed from the rank: a short function returning a
    rank test, a variable assigned one (`master_process = ddp_rank == 0`)."""
    from gpudoctor.linter.ranks import is_light_rank_test

    out: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and (stmt.end_lineno or 0) - stmt.lineno <= GUARD_LINES:
            returns = _returns(stmt.body)
            if returns and any(is_light_rank_test(r, out) for r in returns):
                out.add(stmt.name)
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if is_light_rank_test(stmt.value, out):
                out.add(stmt.targets[0].id)
    return frozenset(out)


def _returns(body: list[ast.stmt]) -> list[ast.expr]:
    """The values a short helper returns, in its body and its `if`s (no walk)."""
    out: list[ast.expr] = []
    for stmt in body:
        if type(stmt) is ast.Return and stmt.value is not None:
            out.append(stmt.value)
        elif type(stmt) is ast.If:
            out += _returns(stmt.body) + _returns(stmt.orelse)
    return out


def _called_bare(text: str, name: str) -> bool:
    """`name(` written as a call of a plain name (not `self.name(`)."""
    at = text.find(name + "(")
    while at >= 0:
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_."):
            return True
        at = text.find(name + "(", at + 1)
    return False


def _forwards(tree: ast.Module, text: str) -> dict[str, tuple[tuple[int, str], ...]]:
    """Top-level function -> its parameters named like a model that it calls
    (`def evaluate(model, loader): ... model(x)`), itself or by handing it
    to another function of the module that does (`generate(model, ...)` ->
    `generate_fn(model=model)` -> `next_token(model, x)` -> `model(x)`)."""
    defs = {f.name: f for f in tree.body if type(f) is ast.FunctionDef or type(f) is ast.AsyncFunctionDef}
    params: dict[str, list[str]] = {}
    passed: dict[str, list[tuple[str, str, str]]] = {}  # func -> (its param, callee, callee's param)
    calls: dict[str, set[str]] = {}
    for name, func in defs.items():
        names = [a.arg for a in func.args.posonlyargs + func.args.args]
        models = {p for p in names if "model" in p.lower() or "net" in p.lower()}
        if not models or not any(_called_bare(text, p) or p + "," in text or p + ")" in text for p in models):
            continue
        params[name] = names
        calls[name] = set()
        passed[name] = []
        for node in ast.walk(func):
            if type(node) is not ast.Call:
                continue
            f = node.func
            if type(f) is ast.Attribute and f.attr == "forward":
                f = f.value
            if type(f) is ast.Name and f.id in models:
                calls[name].add(f.id)
            elif type(f) is ast.Name and f.id in defs and f.id != name:
                target = defs[f.id]
                their = [a.arg for a in target.args.posonlyargs + target.args.args]
                for i, arg in enumerate(node.args):
                    if type(arg) is ast.Name and arg.id in models and i < len(their):
                        passed[name].append((arg.id, f.id, their[i]))
                for kw in node.keywords:
                    if kw.arg and type(kw.value) is ast.Name and kw.value.id in models:
                        passed[name].append((kw.value.id, f.id, kw.arg))
    for _ in range(3):  # a few hops inside the module
        grew = False
        for name, hands in passed.items():
            for mine, callee, theirs in hands:
                if theirs in calls.get(callee, ()) and mine not in calls[name]:
                    calls[name].add(mine)
                    grew = True
        if not grew:
            break
    return {name: tuple((params[name].index(p), p) for p in sorted(called)) for name, called in calls.items() if called}


def _project_calls(tree: ast.Module, text: str) -> dict[str, tuple[str, ...]]:
    """Top-level function -> the names imported from modules that may be the
    project's own (`from utils import reduce_loss`, `import dist_utils`) it
    calls, read from the text: no walk of the tree."""
    local: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and (stmt.level or (stmt.module or "").split(".", 1)[0] not in LIBRARIES):
            base = "." * stmt.level + (stmt.module or "")
            sep = "" if base.endswith(".") else "."
            for alias in stmt.names:
                if alias.name != "*":
                    local[alias.asname or alias.name] = f"{base}{sep}{alias.name}"
        elif isinstance(stmt, ast.Import):
            for alias in stmt.names:
                root = alias.name.split(".", 1)[0]
                if root not in LIBRARIES:
                    local[alias.asname or root] = alias.name if alias.asname else root
    # Classes and constants (`Trainer`, `DEFAULTS`) are not the functions followed.
    local = {name: dotted_name for name, dotted_name in local.items() if not name[:1].isupper()}
    if not local:
        return {}
    defs = [f for f in tree.body if type(f) is ast.FunctionDef or type(f) is ast.AsyncFunctionDef]
    # Found in the text, not the tree: `name(...)`, `module.func(...)`. A call
    # in a comment only makes a chain possible; the collective at its end must be real.
    hits: list[tuple[int, str]] = []
    for name, dotted_name in local.items():
        at = text.find(name)
        while at >= 0:
            end = at + len(name)
            m = CALL_TAIL.match(text, end)
            if m is not None and (at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_.")):
                hits.append((at, dotted_name + m.group(1)))
            at = text.find(name, end)
    from gpudoctor.linter.ranks import conditional_spans, in_spans

    starts = [f.lineno for f in defs]
    found: dict[str, list[str]] = defaultdict(list)
    spans: dict[int, list[tuple[int, int]]] = {}
    line, counted = 1, 0
    for at, called in sorted(hits):
        line += text.count("\n", counted, at)  # in order: the text is counted once
        counted = at
        i = bisect.bisect_right(starts, line) - 1
        inside = i >= 0 and line <= (defs[i].end_lineno or 0)
        if inside:
            # only the calls a function makes every time it runs (see ranks.conditional_spans)
            if i not in spans:
                spans[i] = conditional_spans(defs[i])
            if in_spans(spans[i], line):
                continue
        found[defs[i].name if inside else ""].append(called)
    return {name: tuple(dict.fromkeys(names)) for name, names in found.items()}


def _model_imports(model: FileModel) -> list[str]:
    """The imports the file's model already indexed (`from a import b` is a.b)."""
    return list(model.imports.values()) + list(model.relative_imports.values()) + model.star_imports


def _imports(tree: ast.Module) -> list[str]:
    imports: list[str] = []
    # Statements only, never expressions, and not inside classes or loops:
    # the imports of the module and of its functions (`def main(): from
    # utils import setup`) at a fraction of a full walk.
    stack: list[tuple[ast.stmt, bool]] = [(stmt, True) for stmt in tree.body]
    while stack:
        stmt, top = stack.pop()
        t = type(stmt)
        if isinstance(stmt, ast.Import):
            imports += [alias.name for alias in stmt.names]
        elif isinstance(stmt, ast.ImportFrom):
            base = "." * stmt.level + (stmt.module or "")
            imports += [f"{base}.{alias.name}" if base and not base.endswith(".") else base + alias.name
                        for alias in stmt.names if alias.name != "*"]
            imports.append(base)
        elif t in BLOCKS or (top and (t is ast.FunctionDef or t is ast.AsyncFunctionDef)):
            for name in ("body", "orelse", "finalbody", "handlers"):
                stack += [(s, top and t is not ast.FunctionDef and t is not ast.AsyncFunctionDef)
                          for s in getattr(stmt, name, ())]
    return imports


def _is_main_test(test: ast.expr) -> bool:
    """`__name__ == "__main__"` (either way round)."""
    if type(test) is not ast.Compare:
        return False
    return any(constant(n) == MAIN_TEST for n in [test.left] + test.comparators)


def dotted(path: str) -> list[str]:
    """`/x/pkg/sub/train.py` -> [x, pkg, sub, train]; a package's
    `__init__.py` is the package itself."""
    parts = os.path.normpath(os.path.abspath(path)).split(os.sep)
    parts = [p for p in parts if p]
    if parts and parts[-1].endswith(".py"):
        parts[-1] = parts[-1][:-3]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return parts


class Project:
    """The modules linted together, and the answers to the rules' queries."""

    def __init__(self, facts: Iterable[ModuleFacts]) -> None:
        self.modules: dict[str, ModuleFacts] = {f.path: f for f in facts}
        self._by_name: dict[str, list[ModuleFacts]] = defaultdict(list)
        self._by_path: dict[str, ModuleFacts] = {}
        self._parts: dict[str, list[str]] = {}
        for f in self.modules.values():
            parts = self._parts[f.path] = dotted(f.path)
            self._by_path[".".join(parts)] = f
            for start in range(max(0, len(parts) - NAME_DEPTH), len(parts)):
                self._by_name[".".join(parts[start:])].append(f)
        self._resolved: dict[tuple[str, str], tuple[ModuleFacts, str] | None] = {}
        self._folders: dict[str, str] = {}
        self._named: dict[str, tuple[list[ModuleFacts], str] | None] = {}
        self._reached: dict[tuple[str, str], tuple[str, ModuleFacts, int, tuple[str, ...]] | None] = {}

    @cached_property
    def _edges(self) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
        """Which module imports which, and the reverse; built on the first
        question that needs it."""
        imported: dict[str, set[str]] = {}
        importers: dict[str, set[str]] = defaultdict(set)
        for f in self.modules.values():
            targets = set()
            for name in f.imports:
                found = self.resolve(f, name)
                if found is not None and found[0].path != f.path:
                    targets.add(found[0].path)
            imported[f.path] = targets
            for t in targets:
                importers[t].add(f.path)
        return imported, importers

    def resolve(self, origin: ModuleFacts, name: str) -> tuple[ModuleFacts, str] | None:
        """The module a dotted name (as `origin` writes it) lives in, and the
        rest of the name inside it ("" for the module itself)."""
        if name.startswith("."):
            key = (origin.path, name)
        else:
            if name not in self._named:
                self._named[name] = self._candidates(name)
            named = self._named[name]
            if named is None:
                return None
            if len(named[0]) == 1:  # one module of that name: no folder to compare
                return named[0][0], named[1]
            folder = self._folders.get(origin.path)
            if folder is None:
                folder = self._folders[origin.path] = os.path.dirname(origin.path)
            key = (folder, name)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(origin, name)
        return self._resolved[key]

    def _resolve(self, origin: ModuleFacts, name: str) -> tuple[ModuleFacts, str] | None:
        if name.startswith("."):
            level = len(name) - len(name.lstrip("."))
            own = self._parts.get(origin.path) or dotted(origin.path)
            package = own[:-1] if not origin.path.endswith("__init__.py") else own
            package = package[: len(package) - (level - 1)] if level > 1 else package
            parts = package + [p for p in name.lstrip(".").split(".") if p]
            # relative to a known folder: the full dotted path names exactly one file
            for cut in range(len(parts), len(package) - 1, -1):
                found = self._by_path.get(".".join(parts[:cut]))
                if found is not None:
                    return found, ".".join(parts[cut:])
            return None
        named = self._candidates(name)
        return (self._nearest(origin, named[0]), named[1]) if named is not None else None

    def _candidates(self, name: str) -> tuple[list[ModuleFacts], str] | None:
        """The modules an absolute dotted name may mean (the longest match),
        and the rest of the name."""
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            candidates = self._by_name.get(".".join(parts[:cut]))
            if candidates:
                return candidates, ".".join(parts[cut:])
        return None

    @staticmethod
    def _nearest(origin: ModuleFacts, candidates: list[ModuleFacts]) -> ModuleFacts:
        if len(candidates) == 1:
            return candidates[0]
        # Python finds `import utils` from the script's own folder first.
        home = os.path.dirname(os.path.abspath(origin.path))
        return max(candidates, key=lambda c: len(os.path.commonpath([home, os.path.abspath(c.path)])))

    def reach(self, module: ModuleFacts, attr: str, depth: int = CALL_DEPTH,
              seen: frozenset[tuple[str, str]] = frozenset()) -> tuple[str, ModuleFacts, int, tuple[str, ...]] | None:
        """The collective the function `attr` of `module` makes on every
        call, itself or through the functions of other modules it calls (up
        to `depth` modules away; a cycle stops): (collective, module making
        it, line, the functions followed after `attr`)."""
        direct = module.collectives.get(attr)
        if direct is not None:
            return direct[0], module, direct[1], ()
        if depth <= 0 or (module.path, attr) in seen:
            return None
        seen = seen | {(module.path, attr)}
        for name in module.calls.get(attr, ()):
            found = self.resolve(module, name)
            if found is not None and found[0].path != module.path and found[1]:
                reached = self.reach(found[0], found[1], depth - 1, seen)
                if reached is not None:
                    return reached[0], reached[1], reached[2], (found[1],) + reached[3]
        return None

    def _reach_once(self, module: ModuleFacts, attr: str) -> tuple[str, ModuleFacts, int, tuple[str, ...]] | None:
        key = (module.path, attr)
        if key not in self._reached:
            self._reached[key] = self.reach(module, attr)
        return self._reached[key]

    def calls_collective(self, path: str) -> bool:
        """The module at `path` imports or calls a function of another module
        of the project that makes a collective."""
        module = self.modules.get(path)
        if module is None:
            return False
        names = set(module.imports).union(*module.calls.values())
        for name in names:
            found = self.resolve(module, name)
            if found is not None and found[0].path != path and found[1] and self._reach_once(*found) is not None:
                return True
        return False

    def program(self, path: str) -> set[str]:
        """The modules that run together with `path`: itself, what it imports
        and what imports it (transitively), not the siblings of a shared
        module."""
        out = {path}
        for edges in self._edges:
            todo = [path]
            seen = {path}
            while todo:
                for nxt in edges.get(todo.pop(), ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
            out |= seen
        return out

    def answer(self, path: str, query: Query) -> str | None:
        """None to drop the hit; else "" to keep it, or the text that fills
        `{reached}` in its message."""
        facts = self.modules.get(path)
        if facts is None:
            return ""
        # The file itself was judged by the rule, more precisely than its facts can.
        if query.kind == "no-device-binding":
            return None if any(self.modules[p].binds_device for p in self.program(path) - {path}) else ""
        if query.kind == "no-set-epoch":
            return None if any(self.modules[p].sets_epoch for p in self.program(path) - {path}) else ""
        if query.kind == "reaches-collective":
            found = self.resolve(facts, query.name)
            if found is None or found[0].path == path:
                return None
            module, attr = found
            reached = self._reach_once(module, attr)
            if reached is None:
                return None
            via = "".join(f" -> {name}()" for name in reached[3])
            return f"{via.removeprefix(' -> ') + ' -> ' if via else ''}{reached[0]}() at {os.path.basename(reached[1].path)}:{reached[2]}"
        if query.kind == "not-in-view":
            found = self.resolve(facts, query.name)
            return "" if found is None or found[0].path == path or not found[1] else None
        if query.kind in ("not-rank-guard", "calls-argument"):
            found = self.resolve(facts, query.name)
            if found is None or found[0].path == path or not found[1]:
                return None if query.kind == "calls-argument" else ""
            module, attr = found
            if query.kind == "not-rank-guard":
                return None if attr in module.guards else ""
            return "" if any(query.arg in (str(i), p) for i, p in module.forwards.get(attr, ())) else None
        return ""
