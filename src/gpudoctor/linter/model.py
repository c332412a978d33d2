"""What the rules know about one file, beyond its syntax tree.

A rule asks questions in terms of the program, not the tree: "what qualified
name does this call resolve to?" (import aliases), "where can this value come
from?" (simple assignments, `self.x = ...` attributes, parameters bound at the
call sites of the same file, values returned by the same file's functions),
"who calls this function?" and "is this node under a rank-0 test?".

The answers stay inside the file (nothing is guessed across files) and err
towards "unknown": an unknown value is an origin the rules do not recognise,
so they stay silent about it.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TypeGuard, TypeVar, overload

from gpudoctor.linter.fragment import excerpt_evidence
from gpudoctor.linter.reach import Reach, Unreached, is_program

# Top-level modules that are libraries, not the project's own code: an import of one is not followed
# into the project (linter/project.py), nor is a call into one taken for the project's function (idioms.py).
LIBRARIES = {"torch", "os", "sys", "logging", "numpy", "np", "math", "time", "json", "random", "accelerate",
             "transformers", "datasets", "lightning", "pytorch_lightning", "wandb", "tqdm", "argparse",
             "torchvision", "shutil", "pathlib", "pickle", "copy", "functools", "itertools", "collections",
             "typing", "dataclasses", "re", "subprocess", "warnings", "contextlib", "timm", "yaml", "torch_xla"}

T = TypeVar("T")

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
LOOPS = (ast.For, ast.AsyncFor, ast.While)
# A def, and what a name can be defined as besides an assignment.
Function = ast.FunctionDef | ast.AsyncFunctionDef
Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
# How deep value resolution follows assignments, parameters and returns.
DEPTH = 12
# Calls that iterate over their first argument's items: `for b in tqdm(loader)`
# (enumerate pairs each item with its index).
ITERATION_WRAPPERS = {"enumerate", "tqdm", "iter", "track"}
# A snippet pasted into a question often leaves out its imports. A name
# below that the file uses but never binds is read as the module its usual
# import gives it (`FileModel.assumed` records which); what a rule then
# reports says so and is at most a warning (the engine sees to it).
CONVENTIONAL = {"os": "os", "torch": "torch", "nn": "torch.nn", "dist": "torch.distributed",
                "F": "torch.nn.functional", "mp": "torch.multiprocessing",
                "DDP": "torch.nn.parallel.DistributedDataParallel", "DataParallel": "torch.nn.DataParallel",
                "pl": "pytorch_lightning"}
# Which assumed names the file itself decides (the engine then lets an error stay
# an error). `os` and `torch` mean nothing else. In a file that uses torch, `nn`,
# `dist`, `DDP` and `DataParallel` left unimported are torch's; outside one, only
# what torch's alone has decides: `nn.DataParallel`, `dist.init_process_group`,
# `DDP(model, device_ids=...)`, `mp.spawn` (stdlib multiprocessing has no spawn,
# and `import multiprocessing as mp` is common in torch files). `F` (pyspark's
# functions) and `pl` (polars) stay open: another library's is as likely.
ONE_MEANING = {"os", "torch"}
TORCH_FILE_DECIDES = {"nn", "dist", "DDP", "DataParallel"}
TORCH_ONLY_ATTRIBUTES = {"nn": {"DataParallel", "parallel"}, "dist": {"init_process_group"},
                         "mp": {"spawn", "start_processes"}}
TORCH_ONLY_KEYWORDS = {"DDP": {"device_ids", "output_device", "find_unused_parameters", "broadcast_buffers"}}
# Through a star import of the project's own module (`from ddp_utils import *`), in a file that uses
# torch: torch's conventional aliases and its wrapper's own name are torch's (that module imports them).
STAR_TORCH = {**{n: CONVENTIONAL[n] for n in TORCH_FILE_DECIDES},
              "DistributedDataParallel": "torch.nn.parallel.DistributedDataParallel"}


def import_line(name: str, module: str) -> str:
    """The import that binds `name` to `module`: `import torch.nn as nn`,
    `from torch.nn import DataParallel`."""
    parent, _, last = module.rpartition(".")
    if last[:1].isupper():  # a class: `from torch.nn.parallel import DistributedDataParallel as DDP`
        return f"from {parent} import {last}" + ("" if last == name else f" as {name}")
    return f"import {module}" if module == name else f"import {module} as {name}"


# A test that mentions the process rank: `rank == 0`, `dist.get_rank() == 0`,
# `args.local_rank in (-1, 0)`, `accelerator.is_main_process`, `trainer.is_global_zero`.
RANK_WORD = re.compile(
    r"rank|main_process|is_main|is_master|master_process|global_zero|is_chief|is_primary|is_leader|"
    r"is_root|rank_zero",
    re.IGNORECASE,
)
RANK_ENV = {"RANK", "LOCAL_RANK", "GROUP_RANK", "SLURM_PROCID", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "NODE_RANK"}
MAIN_TEST = "__main__"
# Node types the model indexes while it walks the tree.
INDEXED = {
    ast.Call, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.withitem,
    ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
}


@dataclass(frozen=True)
class Param:
    """A parameter whose value the file does not show (no call site, or the
    function is passed around as a callback)."""

    function: ast.AST
    name: str


@dataclass(frozen=True)
class Element:
    """An item produced by iterating `iterable` (`for x, y in loader`); `path`
    is the unpacking that picked it ((0,) is x, (1,) is y, () the whole item)."""

    iterable: ast.AST
    path: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Binding:
    """`target = value`, as seen by name resolution. `kind` is "value"
    (value is an expression, `path` its unpacking), "iter" (value is iterated),
    or "opaque" (augmented assignment, `except ... as e`, ...)."""

    kind: str
    value: ast.AST
    path: tuple[int, ...]
    pos: tuple[int, int]  # where the binding takes effect


def position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def end_position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)


def terminal_name(node: ast.AST) -> str:
    """The last identifier of `a.b.c`, `a.b.c()`, `a[0].c`: "c"; "" if none."""
    while True:
        if isinstance(node, ast.Call):
            node = node.func
        elif isinstance(node, ast.Attribute):
            return node.attr
        elif isinstance(node, ast.Name):
            return node.id
        elif isinstance(node, ast.Subscript):
            node = node.value
        else:
            return ""


@overload
def constant(node: object) -> object: ...


@overload
def constant(node: object, kind: type[T]) -> T | None: ...


def constant(node: object, kind: type | tuple[type, ...] = object) -> object:
    """A literal's value, or None."""
    if type(node) is ast.Constant and isinstance(node.value, kind):
        return node.value
    return None


def keyword(call: ast.Call, name: str, position: int | None = None) -> ast.expr | None:
    """The argument passed as `name=` (or at `position`), or None."""
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    if position is not None and len(call.args) > position:
        arg = call.args[position]
        if not any(type(a) is ast.Starred for a in call.args[: position + 1]):
            return arg
    return None


def has_star_kwargs(call: ast.Call) -> bool:
    return any(kw.arg is None for kw in call.keywords)


def identifiers(node: ast.AST) -> Iterator[str]:
    """Every Name id and Attribute attr inside an expression."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            yield sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.attr


class FileModel:
    """One parsed file and the indexes the rules share. Build once per file."""

    def __init__(self, tree: ast.Module, text: str) -> None:
        self.tree = tree
        self.text = text
        self.parent: dict[ast.AST, ast.AST] = {}
        self.calls: list[ast.Call] = []
        self.imports: dict[str, str] = {}
        self.star_imports: list[str] = []
        # Answers a rule computes once per file and asks many times (keyed by node).
        self.memo: dict[tuple[object, ...], object] = {}
        # `from .dist_utils import barrier`: name -> ".dist_utils.barrier" (the
        # project resolves it; `qualname` never does, so no rule mistakes a
        # relative import for a library's name)
        self.relative_imports: dict[str, str] = {}
        self.defs: dict[tuple[ast.AST, str], list[Definition]] = defaultdict(list)
        self.classes: dict[str, list[ast.ClassDef]] = defaultdict(list)
        self._targets: list[tuple[ast.Name | ast.Attribute, Binding]] = []
        self._defines: list[Definition] = []
        self.for_loops: list[ast.For | ast.AsyncFor] = []
        # `x[key] = value`: (the subscript target, the assigned value)
        self.item_assignments: list[tuple[ast.Subscript, ast.expr]] = []
        parent = self.parent
        calls = self.calls
        interesting = INDEXED
        # One pass over the tree: record parents (ast.walk plus
        # iter_child_nodes costs three times as much) and index the nodes
        # the rules ask about. `ctx` (Load/Store) singletons are skipped.
        stack: list[ast.AST] = [tree]
        pop, push = stack.pop, stack.append
        AST = ast.AST
        while stack:
            node = pop()
            for field in node._fields:
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, AST):
                            parent[item] = node
                            push(item)
                elif isinstance(value, AST) and field != "ctx":
                    parent[value] = node
                    push(value)
            if type(node) not in interesting:
                continue
            if isinstance(node, ast.Call):
                calls.append(node)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if type(target) is ast.Subscript:
                        self.item_assignments.append((target, node.value))
                    else:
                        self._bind(target, "value", node.value, (), end_position(node))
            elif isinstance(node, ast.AnnAssign):
                if node.value is not None:
                    self._bind(node.target, "value", node.value, (), end_position(node))
            elif isinstance(node, ast.AugAssign):
                self._bind(node.target, "opaque", node, (), end_position(node))
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                self.for_loops.append(node)
                self._bind(node.target, "iter", node.iter, (), end_position(node.iter))
            elif isinstance(node, ast.NamedExpr):
                self._bind(node.target, "value", node.value, (), end_position(node))
            elif isinstance(node, ast.withitem):
                if node.optional_vars is not None:
                    self._bind(node.optional_vars, "value", node.context_expr, (), end_position(node.context_expr))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.imports[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".", 1)[0]
                        self.imports[root] = root
            elif isinstance(node, ast.ImportFrom):
                if node.level > 0:
                    base = "." * node.level + (node.module or "")
                    for alias in node.names:
                        sep = "" if base.endswith(".") else "."
                        self.relative_imports[alias.asname or alias.name] = f"{base}{sep}{alias.name}"
                elif node.module:
                    for alias in node.names:
                        if alias.name == "*":
                            self.star_imports.append(node.module)
                        else:
                            self.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._defines.append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name].append(node)
                self._defines.append(node)
        self.bindings: dict[tuple[ast.AST, str], list[Binding]] = defaultdict(list)
        self.attributes: dict[tuple[ast.ClassDef, str], list[Binding]] = defaultdict(list)
        self.object_attributes: dict[str, list[ast.AST]] = defaultdict(list)
        for bound, binding in self._targets:
            if isinstance(bound, ast.Name):
                self.bindings[(self.scope(bound), bound.id)].append(binding)
            else:  # `self.attr = value` inside a method
                cls = self.method_class(bound)
                if cls is not None:
                    self.attributes[(cls, bound.attr)].append(binding)
                elif binding.kind == "value" and not binding.path and getattr(bound.value, "id", "") != "self":
                    # `args.gpu = int(os.environ["LOCAL_RANK"])`: a settings object's attribute
                    self.object_attributes[bound.attr].append(binding.value)
        for definition in self._defines:
            self.defs[(self.scope(definition), definition.name)].append(definition)
        # the walk is not in source order
        for found in (self.bindings, self.attributes):
            for items in found.values():
                items.sort(key=lambda b: b.pos)
        for defs in self.defs.values():
            defs.sort(key=position)
        self.calls.sort(key=position)
        self.for_loops.sort(key=position)
        del self._targets, self._defines
        self.assumed: dict[str, str] = self._assume_imports(tree, text)
        # torch is imported, or `torch` is used unbound (it means nothing else; through a star import too)
        self.uses_torch = "torch" in self.assumed or any(
            module == "torch" or module.startswith("torch.") for module in self.imports.values()) or bool(
            self.star_imports and "torch." in text and "torch" not in self.imports and not self.defines("torch"))
        # the assumed names whose meaning the file leaves open (at most a warning then)
        self.assumed_open: set[str] = self._open_assumptions(tree) if self.assumed else set()
        self.imports.update(self.assumed)
        # Set by the engine when the file was not valid Python and is read repaired
        # (a pasted snippet): its top-level layout may be the repair's, not the author's,
        # from the first line the repair touched on (1 when it read the whole as a body).
        self.repaired = False
        self.repaired_from = 0
        self.notebook = False  # set by the engine: the joined code cells of a notebook

    @cached_property
    def excerpt(self) -> str | None:
        """Why the file reads as an excerpt of a longer program by its own evidence (an elision line,
        a definition import left unused beside a call of a definition it lacks), or None for a file
        whole by its own evidence: `fragment.excerpt_evidence`, the one fact every rule reads."""
        return excerpt_evidence(self)

    @cached_property
    def reach(self) -> Reach | None:
        """The functions and classes the module's entry reaches (`reach.Reach`), or None where the file is no
        program by its own evidence (a module of definitions: its importers are its entry)."""
        return Reach(self) if is_program(self) else None

    def unreached(self, node: ast.AST) -> Unreached | None:
        """Where `node` stands in code the module's entry never reaches: the outermost such definition around it
        and what names it (`reach.Unreached`, whose `words` say when the line would run); None where it is
        reached, or the file's entry is not known. The one fact every rule reads for "does this line run"."""
        reach = self.reach
        return reach.unreached(node) if reach is not None else None

    def as_written_before(self, line: int) -> bool:
        """The lines above `line` are read as the file has them: it is valid Python,
        or its repair touched only later lines (a snippet cut off after the use)."""
        return not self.repaired or (self.repaired_from > line)

    def _assume_imports(self, tree: ast.Module, text: str) -> dict[str, str]:
        """The conventional names the file uses without binding them anywhere."""
        if self.star_imports:
            return {}
        missing = [n for n in CONVENTIONAL if n not in self.imports and n not in self.relative_imports
                   and (n + "." in text or n + "(" in text)]  # (cheap: most files import what they use)
        if not missing:
            return {}
        bound = {name for _, name in self.bindings} | {name for _, name in self.defs}
        used = {node.id for node in ast.walk(tree) if type(node) is ast.Name and node.id in missing}
        params = {a.arg for node in ast.walk(tree) if isinstance(node, FUNCTIONS)
                  for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs} if used else set()
        return {n: CONVENTIONAL[n] for n in missing if n in used and n not in bound and n not in params}

    def _open_assumptions(self, tree: ast.Module) -> set[str]:
        """The assumed names that could be another library's (see ONE_MEANING)."""
        shown: set[str] = set()  # names used in a way only torch's has
        for node in ast.walk(tree):
            if (type(node) is ast.Attribute and type(node.value) is ast.Name
                    and node.attr in TORCH_ONLY_ATTRIBUTES.get(node.value.id, ())):
                shown.add(node.value.id)
            elif (type(node) is ast.Call and type(node.func) is ast.Name
                  and any(k.arg in TORCH_ONLY_KEYWORDS.get(node.func.id, ()) for k in node.keywords)):
                shown.add(node.func.id)
        return {name for name in self.assumed if name not in ONE_MEANING and name not in shown
                and not (self.uses_torch and name in TORCH_FILE_DECIDES)}

    def _bind(self, target: ast.AST, kind: str, value: ast.AST, path: tuple[int, ...], pos: tuple[int, int]) -> None:
        if isinstance(target, ast.Name):
            self._targets.append((target, Binding(kind, value, path, pos)))
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(e, ast.Starred) for e in target.elts):
                for e in target.elts:
                    self._bind(e.value if isinstance(e, ast.Starred) else e, "opaque", value, (), pos)
                return
            for i, e in enumerate(target.elts):
                self._bind(e, kind, value, path + (i,), pos)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            self._targets.append((target, Binding(kind, value, path, pos)))

    # ---- where things are ------------------------------------------------------

    def scope(self, node: ast.AST) -> ast.AST:
        """The innermost function, class body or module that `node` runs in."""
        up = self.parent.get(node)
        while up is not None and not isinstance(up, SCOPES):
            up = self.parent.get(up)
        return up if up is not None else self.tree

    def function(self, node: ast.AST) -> ast.AST | None:
        """The innermost function containing `node`, or None at module level
        (class bodies run at import, like module code)."""
        up = self.parent.get(node)
        while up is not None and not isinstance(up, FUNCTIONS):
            up = self.parent.get(up)
        return up

    def method_class(self, node: ast.AST) -> ast.ClassDef | None:
        """For `self.x` inside a method, the class; else None."""
        if type(node) is not ast.Attribute or type(node.value) is not ast.Name:
            return None
        func = self.scope(node)
        if not isinstance(func, DEFS):
            return None
        cls = self.parent.get(func)
        if type(cls) is not ast.ClassDef:
            return None
        args = func.args.posonlyargs + func.args.args
        if not args or args[0].arg != node.value.id:
            return None
        if any(terminal_name(d) == "staticmethod" for d in func.decorator_list):
            return None
        return cls

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        up = self.parent.get(node)
        while up is not None:
            yield up
            up = self.parent.get(up)

    def statement(self, node: ast.AST) -> ast.AST:
        while not isinstance(node, ast.stmt) and node in self.parent:
            node = self.parent[node]
        return node

    # ---- names -----------------------------------------------------------------

    @cached_property
    def module_aliases(self) -> dict[str, ast.expr]:
        """Module-level `DDP = torch.nn.parallel.DistributedDataParallel`."""
        out: dict[str, ast.expr] = {}
        for (scope, name), bindings in self.bindings.items():
            if scope is self.tree and len(bindings) == 1 and bindings[0].kind == "value" and not bindings[0].path:
                value = bindings[0].value
                if isinstance(value, (ast.Attribute, ast.Name)):
                    out[name] = value
        return out

    def qualname(self, node: ast.AST, _depth: int = 0) -> str | None:
        """`mp.spawn` -> "torch.multiprocessing.spawn" when `mp` is an import
        alias; None when the root is not an imported name."""
        parts = []
        while type(node) is ast.Attribute:
            parts.append(node.attr)
            node = node.value
        if type(node) is not ast.Name:
            return None
        base = self.imports.get(node.id)
        if base is None:
            alias = self.module_aliases.get(node.id)
            if alias is not None and _depth < 4:
                base = self.qualname(alias, _depth + 1)
            elif self.star_imports and not self.defines(node.id):
                # `torch` and `os` through `from materialNet import *` are the modules that file imports
                # (lint heldout11 u045: `torch.cuda.set_device(...)` read as `materialNet.torch.cuda...`);
                # so are torch's conventional aliases in a torch file (STAR_TORCH: `nn.DataParallel(G)`
                # through `from network.AEI_Net import *`, `DistributedDataParallel(netG, ...)` and
                # `dist.init_process_group` through `from ddp_utils import *`: lint heldout12 u010,
                # heldout10 u033), and elsewhere where only torch's has the attribute (`mp.spawn`)
                if node.id in ONE_MEANING:
                    base = node.id
                elif node.id in STAR_TORCH and self.uses_torch:
                    base = STAR_TORCH[node.id]
                elif node.id in CONVENTIONAL and parts and parts[-1] in TORCH_ONLY_ATTRIBUTES.get(node.id, ()):
                    base = CONVENTIONAL[node.id]
                else:
                    base = f"{self.star_imports[0]}.{node.id}"
        if base is None:
            return None
        parts.append(base)
        return ".".join(reversed(parts))

    def defines(self, name: str) -> bool:
        return any(key[1] == name for key in self.defs) or any(key[1] == name for key in self.bindings)

    def call_name(self, call: ast.AST) -> str | None:
        return self.qualname(call.func) if type(call) is ast.Call else None

    def is_call_to(self, node: object, name: str, roots: tuple[str, ...] | None = None) -> TypeGuard[ast.Call]:
        """`node` is a call whose qualified name ends in `.name` (import
        aliases followed), from one of the `roots` packages if given."""
        if type(node) is not ast.Call:
            return False
        qn = self.qualname(node.func)
        if qn is None or (qn != name and not qn.endswith("." + name)):
            return False
        return roots is None or qn.split(".", 1)[0] in roots

    def calls_to(self, name: str, roots: tuple[str, ...] | None = None) -> Iterator[ast.Call]:
        for call in self.calls:
            if self.is_call_to(call, name, roots):
                yield call

    # ---- values ----------------------------------------------------------------

    def lookup(self, name: ast.Name) -> list[Binding | Param] | None:
        """The bindings that may give `name` its value where it is used (the
        last one before the use in its own scope; the last one in an outer
        scope); None when the file does not bind it (a builtin, an import)."""
        use = position(name)
        scope = self.scope(name)
        first = True
        while True:
            bindings = self.bindings.get((scope, name.id))
            if bindings:
                if first:
                    before = [b for b in bindings if b.pos <= use]
                    if before:
                        return self._reaching(before, name, scope)
                    # read before the scope binds it (in its own assignment's value, `loader = cycle(loader)`,
                    # or in a loop that binds it further down): the parameter first, if the function has one
                    # (lint heldout11 u029, heldout12 u046), then what a later pass may have bound
                    if isinstance(scope, FUNCTIONS) and any(
                            a.arg == name.id for a in scope.args.posonlyargs + scope.args.args + scope.args.kwonlyargs):
                        loops = {id(loop) for loop in self.enclosing_loops(name)}
                        return [Param(scope, name.id)] + [
                            b for b in bindings if isinstance(b.value, ast.AST)
                            and any(id(loop) in loops for loop in self.enclosing_loops(b.value))]
                    return list(bindings)
                return self._reaching(bindings, name, scope)
            if isinstance(scope, FUNCTIONS):
                args = scope.args
                for arg in args.posonlyargs + args.args + args.kwonlyargs:
                    if arg.arg == name.id:
                        return [Param(scope, name.id)]
            if scope is self.tree:
                return None
            first = False
            scope = self.scope(scope)
            while type(scope) is ast.ClassDef:  # methods do not see class-body names
                scope = self.scope(scope)

    def _reaching(self, bindings: list[Binding], use: ast.Name, scope: ast.AST) -> list[Binding | Param]:
        """`_last_bindings` of a name, and the function's parameter of that
        name when no binding covers every path to the use (`def f(model):
        if ddp: model = DDP(model)`)."""
        found, covered = self._last_bindings(bindings, use)
        out: list[Binding | Param] = list(found)
        if not covered and isinstance(scope, FUNCTIONS):
            args = scope.args
            if any(a.arg == use.id for a in args.posonlyargs + args.args + args.kwonlyargs):
                out.insert(0, Param(scope, use.id))
        return out

    def _last_bindings(self, bindings: list[Binding], use: ast.AST | None) -> tuple[list[Binding], bool]:
        """The bindings (in source order, the last ones) that may reach `use`
        (None: the end of their function): the last, and the ones before it
        while it sits in a branch the use is not in (`if a: rank = x` / `elif
        b: rank = y` / `else: rank = 0`), until one runs on every path to the
        use (or an `if` whose every arm binds). The flag says whether one
        does."""
        out: list[Binding] = []
        around_use: set[tuple[int, str]] | None = None
        covered: dict[int, set[str]] = {}

        def reaches_use(stmt: ast.AST) -> bool:
            """`stmt` runs on every path to the use: no arm around it that is
            not around the use, or an `if` around it whose arms all bind."""
            nonlocal around_use
            arms = self._arms(stmt)
            if not arms:
                return True
            if around_use is None:
                around_use = set() if use is None else {
                    (id(node), side) for node, side in self._arms(use, stop_at_scope=False)}
            if around_use.issuperset((id(node), side) for node, side in arms):
                return True  # the use is in the same arms: this binding is the one there
            node, side = arms[0]
            if type(node) is not ast.If or not node.orelse:
                return False
            sides = covered.setdefault(id(node), set())
            sides.add(side)
            # an arm that ends in raise/return never reaches the use: `if distributed: model = DDP(model)`
            # / `else: raise NotImplementedError(...)` (lint heldout10's MoCo-style trainers)
            if self._leaves(node.orelse if side == "body" else node.body):
                sides.add("orelse" if side == "body" else "body")
            return len(sides) == 2 and reaches_use(node)  # both arms bind: as if the `if` did

        done = False
        for binding in reversed(bindings):
            out.append(binding)
            if reaches_use(self.statement(binding.value)):
                done = True
                break
        out.reverse()
        return out, done

    def attribute_bindings(self, cls: ast.ClassDef, use: ast.Attribute) -> list[Binding]:
        """The assignments of `self.<attr>` that may give `use` its value: in
        the use's own method, the ones before it that reach it; from every
        other method, the ones that reach that method's end (`self.model =
        model.to(gpu)` then `self.model = DDP(self.model)` in `__init__` leave
        the DDP wrapper)."""
        bindings = self.attributes.get((cls, use.attr), [])
        if len(bindings) < 2:
            return list(bindings)
        by_function: dict[ast.AST | None, list[Binding]] = {}
        for b in bindings:
            by_function.setdefault(self.function(b.value), []).append(b)
        here = self.function(use)
        out: list[Binding] = []
        own = [b for b in by_function.get(here, []) if b.pos <= position(use)]
        if own:
            found, covered = self._last_bindings(own, use)
            if covered:
                return found
            out += found
        for func, items in by_function.items():
            if func is not here:
                out += self._last_bindings(items, None)[0]
        return out

    def _arms(self, node: ast.AST, stop_at_scope: bool = True) -> tuple[tuple[ast.AST, str], ...]:
        """The conditional blocks around `node`, innermost first: each `if`
        arm (the `if` and "body" / "orelse"), `except` block and `case`;
        within its scope, or up to the module."""
        key = ("arms" if stop_at_scope else "arms-all", node)
        found = self.memo.get(key)
        if isinstance(found, tuple):
            return found
        arms: list[tuple[ast.AST, str]] = []
        child = node
        for up in self.ancestors(node):
            if stop_at_scope and isinstance(up, SCOPES):
                break
            if type(up) is ast.If and child is not up.test:
                arms.append((up, "body" if child in up.body else "orelse"))
            elif type(up) in (ast.ExceptHandler, ast.match_case):
                arms.append((up, ""))
            child = up
        self.memo[key] = out = tuple(arms)
        return out

    def origins(self, expr: ast.AST | None, _depth: int = 0) -> list[object]:
        """Where the value of `expr` may come from: expressions the file
        cannot follow further (calls, attributes, literals, imported names),
        `Param`s and `Element`s."""
        if expr is None:
            return []
        if _depth > DEPTH:
            return [expr]
        # Kept per (expression, depth): a value that reaches a function through
        # several call sites, each through several bindings, is otherwise
        # followed once per path, and the paths multiply with each level (one
        # 55 KB pipeline file took minutes). The depth is in the key because
        # the same expression reached deeper is cut sooner.
        # Each origin once: two paths to one value are one origin (a value
        # reached through both arms and several call sites came back 100 times).
        key = ("origins", expr, _depth)
        found = self.memo.get(key)
        if not isinstance(found, tuple):
            found = self.memo[key] = tuple(dict.fromkeys(self._origins(expr, _depth)))
        return list(found)

    def _origins(self, expr: ast.AST, _depth: int) -> list[object]:
        if isinstance(expr, ast.Name):
            found = self.lookup(expr)
            if found is None:
                return [expr]
            out: list[object] = []
            for item in found:
                out += self._resolve(item, _depth + 1)
            return out
        if isinstance(expr, ast.Attribute):
            cls = self.method_class(expr)
            if cls is not None:
                bindings = self.attribute_bindings(cls, expr)
                if bindings:
                    out = []
                    for b in bindings:
                        out += self._resolve(b, _depth + 1)
                    return out
            return [expr]
        if isinstance(expr, ast.Call):
            callee = self.local_function(expr)
            if callee is not None:
                returns = self.returns(callee)
                if returns:
                    out = []
                    for value in returns:
                        out += self.origins(value, _depth + 1)
                    return out
            return [expr]
        if isinstance(expr, ast.IfExp):
            return self.origins(expr.body, _depth + 1) + self.origins(expr.orelse, _depth + 1)
        if isinstance(expr, ast.NamedExpr):
            return self.origins(expr.value, _depth + 1)
        if isinstance(expr, ast.Await):
            return self.origins(expr.value, _depth + 1)
        return [expr]

    def _resolve(self, item: Binding | Param, depth: int) -> list[object]:
        if isinstance(item, Param):
            return self.parameter_origins(item, depth)
        if item.kind == "opaque":
            return [item.value]
        if item.kind == "iter":
            return [self._element(item.value, item.path, depth)]
        if not item.path:
            return self.origins(item.value, depth)
        return self.unpack(item.value, item.path, depth)

    def _element(self, iterable: ast.AST, path: tuple[int, ...], depth: int) -> Element:
        # `enumerate(x)` yields (i, item): its element 1 is x's element.
        while (
            isinstance(iterable, ast.Call)
            and terminal_name(iterable.func) == "enumerate"
            and iterable.args
            and path
            and path[0] == 1
        ):
            iterable, path = iterable.args[0], path[1:]
        while isinstance(iterable, ast.Call) and terminal_name(iterable.func) in ITERATION_WRAPPERS - {"enumerate"} and iterable.args:
            iterable = iterable.args[0]
        return Element(iterable, path)

    def unpack(self, value: ast.AST, path: tuple[int, ...], depth: int) -> list[object]:
        out: list[object] = []
        for origin in self.origins(value, depth):
            if isinstance(origin, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in origin.elts):
                if path[0] < len(origin.elts):
                    rest = path[1:]
                    elt = origin.elts[path[0]]
                    out += self.unpack(elt, rest, depth + 1) if rest else self.origins(elt, depth + 1)
            elif isinstance(origin, Element):
                out.append(Element(origin.iterable, origin.path + path))
            else:
                out.append(origin)  # unknown: the whole value stands in for its part
        return out

    def parameter_origins(self, param: Param, depth: int) -> list[object]:
        """A parameter's values at the file's call sites, plus `param` itself
        when the function may also be called from elsewhere."""
        func = param.function
        sites = self.call_sites.get(func, []) + self.handed_sites(func)
        out: list[object] = []
        if not sites or func in self.referenced:
            out.append(param)
        if not isinstance(func, DEFS):
            return out or [param]
        args = func.args
        positional = [a.arg for a in args.posonlyargs + args.args]
        defaults = dict(zip(reversed(positional), reversed(args.defaults)))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
        for call, offset in sites:
            value = None
            if param.name in positional:
                index = positional.index(param.name) - offset
                if index < 0:
                    continue  # `self`
                value = keyword(call, param.name, index)
            else:
                value = keyword(call, param.name)
            if value is None and (any(type(a) is ast.Starred for a in call.args) or has_star_kwargs(call)):
                out.append(param)
                continue
            if value is None:
                value = defaults.get(param.name)
            if value is not None:
                out += self.origins(value, depth + 1)
        return out or [param]

    # ---- functions and calls -----------------------------------------------------

    def returns(self, func: Function | ast.Lambda) -> list[ast.expr]:
        if isinstance(func, ast.Lambda):
            return [func.body]
        out: list[ast.expr] = []
        stack: list[ast.AST] = list(func.body)
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Return):
                if node.value is not None:
                    out.append(node.value)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            else:
                stack.extend(ast.iter_child_nodes(node))
        return out

    def find_def(self, name: ast.Name) -> list[Definition]:
        """The function or class definitions a bare name refers to."""
        scope = self.scope(name)
        while True:
            found = self.defs.get((scope, name.id))
            if found:
                return found
            if scope is self.tree:
                return []
            scope = self.scope(scope)
            while type(scope) is ast.ClassDef:
                scope = self.scope(scope)

    def method(self, cls: ast.ClassDef, name: str, _depth: int = 0) -> Function | None:
        for stmt in cls.body:
            if isinstance(stmt, DEFS) and stmt.name == name:
                return stmt
        if _depth < 5:
            for base in cls.bases:
                if type(base) is ast.Name:
                    for parent_cls in self.classes.get(base.id, []):
                        found = self.method(parent_cls, name, _depth + 1)
                        if found is not None:
                            return found
        return None

    def callees(self, call: ast.Call) -> list[tuple[Function, int]]:
        """Same-file functions a call may run, with the number of leading
        parameters the call does not pass (1 for `self`)."""
        func = call.func
        if type(func) is ast.Name:
            out = []
            for d in self.find_def(func):
                if isinstance(d, ast.ClassDef):
                    init = self.method(d, "__init__")
                    if init is not None:
                        out.append((init, 1))
                else:
                    out.append((d, 0))
            return out
        if type(func) is ast.Attribute:
            cls = self.method_class(func)
            if cls is not None:  # self.method(...)
                m = self.method(cls, func.attr)
                return [(m, 1)] if m is not None else []
            owner = self.method_class(func.value)
            if owner is not None and type(func.value) is ast.Attribute and self.classes:
                # `self.logger = Logger(...)` in a method, then `self.logger.sync()`
                return self._built_methods(self.attributes.get((owner, func.value.attr), []), func.attr)
            if type(func.value) is ast.Name and self.classes:
                # `trainer = Trainer(...)` then `trainer.fit()`. Only direct
                # assignments: following parameters would need the call
                # sites this very function is computing.
                return self._built_methods(self.lookup(func.value) or [], func.attr)
        return []

    def _built_methods(self, bindings: Iterable[Binding | Param], name: str) -> list[tuple[Function, int]]:
        """Method `name` of the file's classes whose instances the bindings hold
        (`x = Trainer(...)`, `self.meter = Meter()`)."""
        out: list[tuple[Function, int]] = []
        for b in bindings:
            value = b.value if type(b) is Binding and b.kind == "value" and not b.path else None
            if type(value) is ast.Call and type(value.func) is ast.Name:
                for d in self.find_def(value.func):
                    if type(d) is ast.ClassDef:
                        m = self.method(d, name)
                        if m is not None:
                            out.append((m, 1))
        return out

    def local_function(self, call: ast.Call) -> Function | None:
        """The one same-file function (not class) a call runs, or None."""
        if isinstance(call.func, ast.Name):
            found = [d for d in self.find_def(call.func) if not isinstance(d, ast.ClassDef)]
            return found[0] if len(found) == 1 else None
        if isinstance(call.func, ast.Attribute) and self.method_class(call.func) is not None:
            callees = self.callees(call)
            return callees[0][0] if len(callees) == 1 else None
        return None

    @cached_property
    def call_sites(self) -> dict[ast.AST, list[tuple[ast.Call, int]]]:
        """Function -> the calls in this file that run it."""
        index: dict[ast.AST, list[tuple[ast.Call, int]]] = defaultdict(list)
        if not self.defs:
            return index
        names = {key[1] for key in self.defs}
        for call in self.calls:
            if terminal_name(call.func) in names or type(call.func) is ast.Name:
                for func, offset in self.callees(call):
                    index[func].append((call, offset))
        return index

    def handed_sites(self, func: ast.AST) -> list[tuple[ast.Call, int]]:
        """The calls that run `func` after it is handed to another function of this file, which
        calls its parameter: `init_processes(test, args)` and, in `def init_processes(fn, args)`,
        `fn(rank, world_size, args)` (the PyTorch tutorial's shape, and the torchrun scripts that
        copy it: lint heldout25 u033, whose `test(rank, ...)` gets RANK that way). Each with the
        number of leading parameters the call does not pass (0: the function itself is handed)."""
        key = ("handed-sites", func)
        memo = self.memo.get(key)
        if isinstance(memo, list):
            return memo
        out: list[tuple[ast.Call, int]] = []
        for ref in self.references.get(func, []):
            holder = self.parent.get(ref)
            if type(holder) is not ast.Call or ref not in holder.args:
                continue  # (a keyword or a spawn's target: the launcher, not this file, calls it)
            for callee, offset in self.callees(holder):
                if not isinstance(callee, DEFS) or callee is func:
                    continue
                positional = [a.arg for a in callee.args.posonlyargs + callee.args.args]
                index = holder.args.index(ref) + offset
                if index >= len(positional):
                    continue
                name = positional[index]
                out += [(call, 0) for call in self.calls if type(call.func) is ast.Name and call.func.id == name
                        and self.function(call) is callee]
        self.memo[key] = out
        return out

    @cached_property
    def references(self) -> dict[ast.AST, list[ast.AST]]:
        """Function -> the places that pass it around without calling it
        (`mp.spawn(main, ...)`, `Thread(target=self.run)`)."""
        index: dict[ast.AST, list[ast.AST]] = defaultdict(list)
        names = {key[1] for key in self.defs}
        if not names:
            return index
        for node in self.parent:  # every node but the module: cheaper than another ast.walk
            target: list[Definition]
            if isinstance(node, ast.Name) and node.id in names and type(node.ctx) is ast.Load:
                target = self.find_def(node)
            elif isinstance(node, ast.Attribute) and node.attr in names and type(node.ctx) is ast.Load:
                cls = self.method_class(node)
                m = self.method(cls, node.attr) if cls is not None else None
                target = [m] if m is not None else []
            else:
                continue
            parent = self.parent.get(node)
            if type(parent) is ast.Call and parent.func is node:
                continue
            if type(parent) is ast.Attribute:  # `Trainer.method`, `func.__name__`
                continue
            for d in target:
                func = self.method(d, "__init__") if isinstance(d, ast.ClassDef) else d
                if func is not None:
                    index[func].append(node)
        return index

    @cached_property
    def referenced(self) -> set[ast.AST]:
        return set(self.references)

    def entry_sites(self, func: ast.AST) -> list[ast.AST]:
        """Every call of `func` and every place that passes it on."""
        return [c for c, _ in self.call_sites.get(func, [])] + self.references.get(func, [])

    def spawned(self, func: ast.AST) -> bool:
        """`func` is the target of torch's mp.spawn / start_processes."""
        for ref in self.references.get(func, []):
            call = self.parent.get(ref)
            if type(call) is ast.keyword and call.arg == "fn":
                # `mp.spawn(fn=main, args=(...), nprocs=n)` (lint heldout15 u009, the DDP tutorial's multigpu.py)
                if type(self.parent.get(call)) is ast.Call and self.is_spawn(self.parent[call]):
                    return True
                continue
            if type(call) is ast.Call and call.args and call.args[0] is ref and self.is_spawn(call):
                return True
        return False

    def is_spawn(self, call: ast.AST) -> bool:
        qn = self.call_name(call)
        return qn in (
            "torch.multiprocessing.spawn",
            "torch.multiprocessing.start_processes",
            "torch.multiprocessing.spawn.spawn",
            "torch.multiprocessing.spawn.start_processes",
        )

    # ---- control flow ------------------------------------------------------------

    def conditions(self, node: ast.AST) -> Iterator[ast.expr]:
        """Tests that decide whether `node` runs, within its function: the
        enclosing `if`/`while`/conditional expressions, `x and node`, and
        earlier `if test: return` (or raise/continue/break) statements."""
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, (*FUNCTIONS, ast.ClassDef)):
                # an early exit at the top of the function still decides: `if rank != 0: return`
                yield from self._early_exits(anc, child)
                return
            if isinstance(anc, (ast.If, ast.While, ast.IfExp)):
                if child is not anc.test:
                    yield anc.test
            elif isinstance(anc, ast.BoolOp):
                for value in anc.values:
                    if value is child:
                        break
                    yield value
            elif isinstance(anc, ast.comprehension):
                yield from anc.ifs
            yield from self._early_exits(anc, child)
            child = anc

    def _early_exits(self, anc: ast.AST, child: ast.AST) -> Iterator[ast.expr]:
        """The tests of earlier early-exit statements in the block of `anc` that holds `child`."""
        for field in ("body", "orelse", "finalbody"):
            block = getattr(anc, field, None)
            if type(block) is list and child in block:
                for stmt in block[: block.index(child)]:
                    if type(stmt) is ast.If and self._exits(stmt.body):
                        yield stmt.test

    @staticmethod
    def _leaves(block: list[ast.stmt]) -> bool:
        """Every path through `block` ends in `raise` or `return` (an `elif` chain whose arms all do)."""
        if not block:
            return False
        last = block[-1]
        if type(last) is ast.If:
            return FileModel._leaves(last.body) and FileModel._leaves(last.orelse)
        return type(last) in (ast.Return, ast.Raise)

    @staticmethod
    def _exits(block: list[ast.stmt]) -> bool:
        return bool(block) and type(block[-1]) in (ast.Return, ast.Raise, ast.Continue, ast.Break)

    def enclosing_loops(self, node: ast.AST) -> Iterator[ast.For | ast.AsyncFor | ast.While]:
        """Loops around `node` within its function, innermost first."""
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, FUNCTIONS) or type(anc) is ast.ClassDef:
                return
            if isinstance(anc, LOOPS) and child is not getattr(anc, "iter", None) and child is not anc.orelse:
                yield anc
            child = anc

    def under_main_guard(self, node: ast.AST) -> bool:
        for test in self.conditions(node):
            for sub in ast.walk(test):
                if type(sub) is ast.Constant and sub.value == MAIN_TEST:
                    return True
        return False

    # ---- ranks -------------------------------------------------------------------

    def is_rank_test(self, test: ast.expr) -> bool:
        """`test` depends on which process this is."""
        for sub in ast.walk(test):
            if isinstance(sub, ast.Name):
                if RANK_WORD.search(sub.id) or self._rank_value(sub):
                    return True
            elif isinstance(sub, ast.Attribute):
                if RANK_WORD.search(sub.attr) or self._rank_value(sub):
                    return True
            elif isinstance(sub, ast.Constant) and type(sub.value) is str and sub.value in RANK_ENV:
                return True
        return False

    def _rank_value(self, node: ast.AST) -> bool:
        """A variable holding a rank under another name (`gpu_id =
        int(os.environ["LOCAL_RANK"])`, the first parameter of a spawned function)."""
        if type(node) is ast.Name and self.lookup(node) is None:
            return False
        if type(node) is ast.Attribute and self.method_class(node) is None:
            return False
        for origin in self.origins(node):
            if type(origin) is Param:
                func = origin.function
                if isinstance(func, DEFS) and func.args.args and func.args.args[0].arg == origin.name and self.spawned(func):
                    return True
                continue
            if not isinstance(origin, ast.AST):
                continue
            for sub in ast.walk(origin):
                if type(sub) is ast.Constant and type(sub.value) is str and sub.value in RANK_ENV:
                    return True
                if type(sub) is ast.Call and RANK_WORD.search(terminal_name(sub.func)):
                    return True
        return False

    def rank_guarded(self, node: ast.AST, _seen: set | None = None) -> bool:
        """`node` runs on one rank only: a rank test decides it, in its own
        function or around every call (in this file) of that function. A
        function the file never calls or passes on is given the benefit of
        the doubt (its caller is elsewhere)."""
        if any(self.is_rank_test(test) for test in self.conditions(node)):
            return True
        func = self.function(node)
        if func is None:
            return False
        if isinstance(func, DEFS) and any(RANK_WORD.search(terminal_name(d)) for d in func.decorator_list):
            return True  # Lightning's @rank_zero_only
        seen = _seen if _seen is not None else set()
        if func in seen:
            return True
        seen.add(func)
        sites = self.entry_sites(func)
        if not sites:
            return True
        return all(self.rank_guarded(site, seen) for site in sites)
