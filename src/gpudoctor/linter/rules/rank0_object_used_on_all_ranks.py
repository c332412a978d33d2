from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.model import DEFS, Binding, FileModel, Param, identifiers, position, terminal_name
from gpudoctor.linter.ranks import is_rank_condition, is_rank_value, set_on_some_ranks
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# The operators that raise ZeroDivisionError on a zero right operand.
DIVIDES = (ast.Div, ast.FloorDiv, ast.Mod)
# Methods that put items in a list.
FILLS = frozenset({"append", "extend", "insert"})
# Calls a list may be handed without anything put in it (any other could fill it: `dist.all_gather_object(l, x)`).
READS = frozenset({"len", "sum", "print", "float", "int", "str", "round", "max", "min", "abs", "sorted", "list",
                   "tuple", "mean", "format"})


class Rank0ObjectUsedOnAllRanks(Rule):
    """A value every rank starts empty and only some ranks fill, under a test of the rank, then used on
    every rank in a way that raises on the empty one: a count started at `0` and counted up only under
    `if rank == 0:` that divides on every rank (`avg_loss_t = mse_temp/cont`: ZeroDivisionError on the
    other ranks, lint heldout21 u045), a list started `[]` and appended to only on the main process whose
    `len()` divides on every process (`sum(train_losses) / len(train_losses)` after
    `... and accelerator.is_main_process: train_losses.append(...)`, lint heldout21 u007), an object
    built on one rank and `None` on the others whose attribute every rank reads (`summary =
    SummaryWriter(...)` under `if gpu_rank == main_gpu:`, `summary = None` in the `else`, then
    `summary.flush()` on every rank: AttributeError, lint h15 u003).

    An error where the use stands under no test in its function (it runs on every rank whenever the
    function does); a warning naming the test where one decides whether it runs (`if
    config.model['resume']: netio.load_file(...)`, lint heldout18 u038). The rank test must leave a rank
    out for good: the rank compared with a constant, or a flag of the main process
    (`accelerator.is_main_process`), not a shard of the loop's items (`if i % world_size != rank:
    continue`, nanoGPT's HellaSwag loop, where every rank counts its own share).

    Not flagged: a use under a rank test itself, or under a test of the value (`x / n if n else 0`,
    `if summary is not None:`); a value passed to a call that could fill it (a broadcast) or bound again
    (`cont = broadcast(cont)`); a function whose every call in the file runs on one rank. A name bound
    only under the rank test (no empty value first) is undefined-name's UnboundLocalError.
    """

    id = "rank0-object-used-on-all-ranks"
    message = ("a value filled only on some ranks is used on every rank: on the others it is still empty (0, [], "
               "None) and the use raises")
    fix = "use it only under the same rank test, or give every rank the value (dist.broadcast_object_list / " \
          "all_reduce) before the use"
    severity = ERROR  # certain on every rank the test leaves out, whenever the line runs
    in_tests = False
    needles = ("rank", "main_process", "is_main", "master", "main_gpu")

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")
        seen = 0
        for x, y in loader:
            seen += len(y)  # on every rank
        accuracy = correct / seen
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")
        writer = SummaryWriter() if dist.get_rank() == 0 else None
        if writer is not None:
            writer.flush()
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")
        rank = dist.get_rank()
        count = 0
        for batch in loader:
            if rank == 0:
                count += 1
        average = total / count  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        said: set[tuple[int, str]] = set()
        for node in ast.walk(file.tree):
            if type(node) is ast.BinOp and type(node.op) in DIVIDES:
                found = self._empty_divisor(file, node)
            elif type(node) is ast.Attribute and type(node.value) is ast.Name and type(node.ctx) is ast.Load:
                found = self._none_read(file, node)
            else:
                continue
            if found is None:
                continue
            name, what, test = found
            key = (id(file.function(node)), name)
            if key in said or not self._on_every_rank(file, node, name):
                continue
            said.add(key)
            decides = list(file.conditions(node))
            message = what.replace("TEST", f"`{ast.unparse(test)[:50]}` (line {test.lineno})")
            if decides:
                yield Hit(node, severity=WARNING, fix=self._fix(name, test),
                          message=f"{message}, whenever `{ast.unparse(decides[0])[:50]}` holds")
            else:
                yield Hit(node, message=message, fix=self._fix(name, test))

    @staticmethod
    def _fix(name: str, test: ast.expr) -> str:
        return f"if {ast.unparse(test)[:40]}: ...  # use {name} only there, or give every rank its value first"

    def _empty_divisor(self, file: FileModel, op: ast.BinOp) -> tuple[str, str, ast.expr] | None:
        """`op` divides by a count or a list's len() that starts empty on every rank and is filled only
        under a rank test: (name, what, that test)."""
        right = op.right
        counted = type(right) is ast.Call and type(right.func) is ast.Name and right.func.id == "len" \
            and len(right.args) == 1 and type(right.args[0]) is ast.Name
        divisor = right.args[0] if counted else right  # type: ignore[attr-defined]
        if type(divisor) is not ast.Name:
            return None
        found = file.lookup(divisor) or []
        if not found or any(type(b) is Param for b in found):
            return None
        bindings = [b for b in found if type(b) is Binding]
        empty = [b for b in bindings if b.kind == "value" and not b.path and _empty(b.value, counted)]
        if not empty or any(_rank_test(file, b.value) is not None for b in empty):
            return None
        scope = file.function(op) or file.tree
        if counted:
            if len(empty) != len(bindings):
                return None
            fills = [n for n in ast.walk(scope) if _fills(n, divisor.id)]
            if any(self._handed(file, n, divisor.id) for n in ast.walk(scope)):
                return None  # handed to a call that could fill it (a gather, a broadcast)
        else:
            fills = [b.value for b in bindings if b not in empty]
            if any(b.kind != "opaque" or type(b.value) is not ast.AugAssign for b in bindings if b not in empty):
                return None  # bound again to something else (`cont = broadcast(cont)`)
        fills = [f for f in fills if position(f) < position(op)]
        tests = [_rank_test(file, f) for f in fills]
        if not fills or any(t is None for t in tests):
            return None
        test = tests[0]
        assert test is not None
        if counted:
            what = (f"`{divisor.id}` starts empty (line {empty[0].pos[0]}) and is filled only under TEST, but "
                    f"len({divisor.id}) divides here on every rank: on the ranks that test leaves out it is still "
                    "empty, ZeroDivisionError")
        else:
            what = (f"`{divisor.id}` starts at 0 (line {empty[0].pos[0]}) and is counted up only under TEST, but "
                    "divides here on every rank: on the ranks that test leaves out it is still 0, ZeroDivisionError")
        return divisor.id, what, test

    @staticmethod
    def _handed(file: FileModel, node: ast.AST, name: str) -> bool:
        if type(node) is not ast.Call or terminal_name(node.func) in READS or _fills(node, name):
            return False
        return any(type(a) is ast.Name and a.id == name for a in [*node.args, *(k.value for k in node.keywords)])

    def _none_read(self, file: FileModel, attr: ast.Attribute) -> tuple[str, str, ast.expr] | None:
        """`attr` reads an attribute of a name that holds an object on some ranks and None on the
        others (`set_on_some_ranks`): (name, what, the rank test)."""
        name = attr.value
        assert type(name) is ast.Name
        found = file.lookup(name) or []
        if not found or not set_on_some_ranks(file, found):
            return None
        values = [b.value for b in found if type(b) is Binding]
        if any(type(v) is ast.Constant and v.value is not None for v in values) \
                or any(type(e) is ast.Constant and e.value is not None
                       for v in values if type(v) is ast.IfExp for e in (v.body, v.orelse)):
            return None  # 0 or "" on the others: an attribute read there is not this mistake
        test = next((t for t in (_rank_test(file, v) for v in values) if t is not None), None)
        if test is None:
            return None
        shown = ast.unparse(attr)[:40]
        return name.id, (f"`{name.id}` holds an object only under TEST and None on the other ranks, but `{shown}` is "
                         "read here on every rank: AttributeError ('NoneType' object has no attribute "
                         f"'{attr.attr}') there"), test

    @staticmethod
    def _on_every_rank(file: FileModel, node: ast.AST, name: str) -> bool:
        """`node` runs on every rank: no rank test and no test of `name` decides it in its function, and
        its function is not called only on one rank."""
        if any(is_rank_condition(file, t) or name in set(identifiers(t)) for t in file.conditions(node)):
            return False
        func = file.function(node)
        if isinstance(func, DEFS):
            sites = file.entry_sites(func)
            if sites and all(file.rank_guarded(site) for site in sites):
                return False
        return True


def _empty(value: ast.AST, counted: bool) -> bool:
    """`[]` / `list()` for a list whose len() divides; `0` / `0.0` for a count."""
    if counted:
        return (type(value) is ast.List and not value.elts) or (
            type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "list" and not value.args)
    return type(value) is ast.Constant and type(value.value) in (int, float) and value.value == 0


def _fills(node: ast.AST, name: str) -> bool:
    """`name.append(...)` / `.extend` / `.insert`, or `name += ...`."""
    if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in FILLS:
        return type(node.func.value) is ast.Name and node.func.value.id == name
    return type(node) is ast.AugAssign and type(node.target) is ast.Name and node.target.id == name


def _rank_test(file: FileModel, node: ast.AST) -> ast.expr | None:
    """The test around `node`, in its function, that leaves some rank out for good (`_leaves_ranks_out`);
    for a conditional expression, its own test (`SummaryWriter() if rank == 0 else None`)."""
    if type(node) is ast.IfExp and _leaves_ranks_out(file, node.test):
        return _rank_part(file, node.test)
    return next((_rank_part(file, t) for t in file.conditions(file.statement(node)) if _leaves_ranks_out(file, t)), None)


def _rank_part(file: FileModel, test: ast.expr) -> ast.expr:
    """The part of `test` that leaves ranks out (`accelerator.is_main_process` of `(i + 1) % n == 0 and
    accelerator.is_main_process`)."""
    if type(test) is ast.BoolOp:
        return next((_rank_part(file, v) for v in test.values if _leaves_ranks_out(file, v)), test)
    return test


def _leaves_ranks_out(file: FileModel, test: ast.expr) -> bool:
    """`test` is false on some rank whatever else holds: the rank compared with a constant (`rank == 0`,
    `local_rank in [-1, 0]`), a flag of the main process (`accelerator.is_main_process`), or such a test
    in a conjunction or negated; not a comparison of the rank with another value (`i % world_size !=
    rank`: every rank takes its share)."""
    if type(test) is ast.BoolOp:
        return type(test.op) is ast.And and any(_leaves_ranks_out(file, v) for v in test.values)
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        return _leaves_ranks_out(file, test.operand)
    if not is_rank_condition(file, test):
        return False
    if type(test) is ast.Compare:
        sides = [test.left, *test.comparators]
        if len(sides) != 2:
            return False
        return any(is_rank_value(file, s) and _one_value(file, o) for s, o in (sides, sides[::-1]))
    return True


def _one_value(file: FileModel, node: ast.AST) -> bool:
    """`node` is one value on every rank and every pass: a literal (`0`, `[-1, 0]`), or a name that is no
    rank and no loop's item (`main_gpu`, not the `i` of `for i in range(world_size)`)."""
    if _constant(node):
        return True
    if type(node) is ast.Attribute:
        return not is_rank_value(file, node)
    if type(node) is not ast.Name or is_rank_value(file, node):
        return False
    found = file.lookup(node) or []
    return not any(type(b) is Binding and b.kind == "iter" for b in found)


def _constant(node: ast.AST) -> bool:
    """A literal number, or a list / tuple of them (`-1`, `0`, `[-1, 0]`)."""
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        node = node.operand
    if type(node) in (ast.List, ast.Tuple):
        return bool(node.elts) and all(_constant(e) for e in node.elts)  # type: ignore[attr-defined]
    return type(node) is ast.Constant and type(node.value) is int
