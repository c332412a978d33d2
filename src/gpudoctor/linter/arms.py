"""Which arm of an `if` a node runs in, and when two reads of a name read the
same value: what the rules about a model and its DDP / DataParallel wrapper
ask before they call one read the wrapper and another the bare model. And
which arms the file's own constants rule out (`if 0 and args.distributed:`,
`random_sample = True` then `if not random_sample:`): code written but never run."""

from __future__ import annotations

import ast

from gpudoctor.linter.model import FileModel, Param


def arms(file: FileModel, node: ast.AST) -> list[tuple[ast.If | ast.IfExp, str]]:
    """(the `if` / conditional expression, "body" or "orelse") for each branch around `node`."""
    out: list[tuple[ast.If | ast.IfExp, str]] = []
    child = node
    for anc in file.ancestors(node):
        if isinstance(anc, (ast.If, ast.IfExp)) and child is not anc.test:
            body = anc.body if isinstance(anc.body, list) else [anc.body]
            out.append((anc, "body" if child in body else "orelse"))
        child = anc
    return out


def holding(file: FileModel, node: ast.AST) -> set[tuple[str, bool]]:
    """The tests that hold wherever `node` runs, as (test as written, `not` taken off; its truth):
    each part of an `and` in whose body it sits (`if args.distributed and rank == 0:`), and the
    test of an `if` in whose `else` it sits, false, where that test is no `and` (whose `else`
    holds no one part). An `or` decides none of its parts."""
    out = set()
    for branch, arm in arms(file, node):
        test = branch.test
        if arm == "orelse" and type(test) is ast.BoolOp and type(test.op) is ast.And:
            continue
        parts = test.values if arm == "body" and type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
        for part in parts:
            truth = arm == "body"
            while type(part) is ast.UnaryOp and type(part.op) is ast.Not:
                part, truth = part.operand, not truth
            if not (type(part) is ast.BoolOp and type(part.op) is ast.Or):
                out.add((ast.unparse(part), truth))
    return out


def other_arms(file: FileModel, one: ast.AST, other: ast.AST) -> bool:
    """`one` and `other` sit in different arms of one `if` (`model.module.x if wrapped else
    model.x`, `if isinstance(unet, DDP): unet.module.c else: unet.c`): the file reads
    `.module` only where its test says the wrapper is there (dev d083, heldout4 q018)."""
    found = {id(branch): arm for branch, arm in arms(file, one)}
    return any(id(branch) in found and found[id(branch)] != arm for branch, arm in arms(file, other))


def value_key(file: FileModel, name: ast.expr) -> tuple[str, tuple[int, ...]] | None:
    """What makes two reads of a name the same value: its spelling and the bindings that reach it
    (a parameter by its function; none for a name the file never binds: a snippet's `model`)."""
    if type(name) is not ast.Name:
        return None
    found = file.lookup(name)
    return name.id, tuple(sorted(id(b.function) if isinstance(b, Param) else id(b) for b in found or ()))


# Statements after which the rest of their block never runs.
EXITS = (ast.Raise, ast.Return, ast.Continue, ast.Break)


def after_exit(file: FileModel, node: ast.AST) -> ast.stmt | None:
    """The `raise` / `return` / `continue` / `break` that an earlier statement of a block around `node`
    ends with, so that `node` never runs (`else: raise NotImplementedError` and, below it, the call the
    raise replaced: lint heldout27 u001, a `main_worker(...)` left under its `raise`). None where
    nothing cuts `node` off."""
    child = node
    for up in [node, *file.ancestors(node)]:
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(up, field, None)
            if isinstance(block, list) and child in block:
                cut = next((s for s in block[:block.index(child)] if isinstance(s, EXITS)), None)
                if cut is not None:
                    return cut
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Module)):
            return None
        child = up
    return None


def ruled_out(file: FileModel, node: ast.AST) -> bool:
    """`node` sits in an `if` arm that the file's own constants never take: the test reads only
    literals and module-level names bound once, to a literal (`random_sample = True`, then
    `if not random_sample:`); or in the body of a strict comparison that an `if` of the same
    test just above made false (`made_false_above`); or below a `raise` / `return` / `continue` /
    `break` of its block (`after_exit`)."""
    if after_exit(file, node) is not None:
        return True
    child = node
    for up in file.ancestors(node):
        if type(up) is ast.If and child is not up.test:
            truth = fixed_truth(file, up.test)
            if truth is not None and truth != (child in up.body):
                return True
            if child in up.body and made_false_above(file, up):
                return True
        child = up
    return False


def made_false_above(file: FileModel, branch: ast.If) -> ast.If | None:
    """The `if` of the same strict comparison earlier in the same block whose body makes it false
    for good (`if loss < best: best = loss`), with nothing between that rebinds either side (and
    neither side a global another function rebinds): then `branch.test` is false on both paths,
    and its body never runs. The best-checkpoint test written twice, the save under the second
    (lint heldout13 u057, rightnn's ddp.py: `if test_loss < min_loss: min_loss = test_loss`, then
    `if test_loss < min_loss: ... torch.save(model, ...)`, a save its reader found unreachable)."""
    test = branch.test
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) not in (ast.Lt, ast.Gt):
        return None
    sides = {ast.unparse(test.left), ast.unparse(test.comparators[0])}
    if len(sides) != 2:
        return None
    block = _block_of(file, branch)
    if block is None:
        return None
    func = file.function(branch)
    for name in sides:
        if any(type(n) is ast.Global and name in n.names and file.function(n) is not func for n in ast.walk(file.tree)):
            return None  # another function may rebind it in between
    for prev in reversed(block[:block.index(branch)]):
        if type(prev) is ast.If and ast.unparse(prev.test) == ast.unparse(test):
            for i, stmt in enumerate(prev.body):
                if type(stmt) is ast.Assign and len(stmt.targets) == 1 \
                        and {ast.unparse(stmt.targets[0]), ast.unparse(stmt.value)} == sides:
                    later = prev.body[i + 1:] + prev.orelse
                    return None if any(_stores(s, sides) for s in later) else prev
            return None
        if _stores(prev, sides):
            return None
    return None


def _block_of(file: FileModel, stmt: ast.stmt) -> list[ast.stmt] | None:
    """The statement list `stmt` stands in."""
    parent = file.parent.get(stmt)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None) if parent is not None else None
        if isinstance(block, list) and any(s is stmt for s in block):
            return block
    return None


def _stores(stmt: ast.AST, names: set[str]) -> bool:
    """Some target in `stmt` is one of `names` (an assignment, `+=`, a loop, `with ... as`)."""
    return any(isinstance(n, (ast.Name, ast.Attribute, ast.Subscript)) and type(n.ctx) is ast.Store
               and ast.unparse(n) in names for n in ast.walk(stmt))


def fixed_truth(file: FileModel, test: ast.expr, _depth: int = 0) -> bool | None:
    """The value of a test the file fixes: literals, `not`, `and` / `or`, names bound once in
    their scope (the module, or the function the test is in) to a literal, nowhere rebound (lint
    heldout18 u016: `multi_gpu=True` in main(), then `if multi_gpu: ... else: ...`), and an
    option's attribute the file sets once before the test runs (`fixed_attribute`); None where
    anything else decides it."""
    if _depth > 4:
        return None
    if type(test) is ast.Constant:
        return bool(test.value)
    if type(test) is ast.Attribute:
        return fixed_attribute(file, test, _depth)
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        inner = fixed_truth(file, test.operand, _depth + 1)
        return None if inner is None else not inner
    if type(test) is ast.BoolOp:
        values = [fixed_truth(file, v, _depth + 1) for v in test.values]
        if type(test.op) is ast.And:
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    if type(test) is ast.Name:
        found = file.lookup(test)
        scope = file.scope(test)
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or not file.bindings.get((scope, test.id)):
            scope = file.tree
        own = file.bindings.get((scope, test.id), [])
        if not found or len(found) != 1 or len(own) != 1 or found[0] is not own[0]:
            return None
        binding = own[0]
        if binding.kind != "value" or binding.path or type(binding.value) is not ast.Constant:
            return None
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) and test.id in n.names for n in ast.walk(file.tree)):
            return None  # another function may rebind it
        return bool(binding.value.value)
    return None


def fixed_attribute(file: FileModel, test: ast.Attribute, depth: int = 0) -> bool | None:
    """The value of `args.flag` where the file stores that attribute once, as a statement of a function's
    own block (not under an `if`, a loop or a `try`), to a value `fixed_truth` decides, and the test runs
    only after the store: later in that function, or in a function that only that function runs (calls
    or spawns), after the store. lint heldout22 u039, an ImageNet-example trainer: main() sets
    `args.multiprocessing_distributed = True`, then `args.distributed = args.world_size > 1 or
    args.multiprocessing_distributed`, then spawns main_worker, whose `else:` arm of `if args.distributed:`
    (a DataParallel) never runs. None where the attribute is stored elsewhere too, or named as a string
    (`setattr(args, "flag", ...)`, `vars(args)["flag"]`, an option's `dest=`)."""
    if type(test.value) is not ast.Name:
        return None
    spelling = ast.unparse(test)
    stores = _attribute_stores(file).get(spelling, [])
    if len(stores) != 1 or f"'{test.attr}'" in file.text or f'"{test.attr}"' in file.text:
        return None
    store = stores[0]
    assign = file.parent.get(store)
    if type(assign) is not ast.Assign or assign.targets != [store]:
        return None
    holder = file.parent.get(assign)
    if not isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef)) or assign not in holder.body:
        return None
    func = file.function(test)
    if func is holder:
        after = test.lineno > assign.lineno
    else:
        sites = file.entry_sites(func) if func is not None else []
        after = bool(sites) and all(file.function(site) is holder and getattr(site, "lineno", 0) > assign.lineno
                                    for site in sites)
    return fixed_truth(file, assign.value, depth + 1) if after else None


def _attribute_stores(file: FileModel) -> dict[str, list[ast.Attribute]]:
    """`args.flag` -> the places the file stores it (an assignment's target, `+=`, a loop's target)."""
    key = ("attribute-stores", file.tree)
    memo = file.memo.get(key)
    if isinstance(memo, dict):
        return memo
    found: dict[str, list[ast.Attribute]] = {}
    for node in ast.walk(file.tree):
        if type(node) is ast.Attribute and type(node.ctx) is ast.Store and type(node.value) is ast.Name:
            found.setdefault(ast.unparse(node), []).append(node)
    file.memo[key] = found
    return found


# Names of the wrapper classes, as files spell them (`DDP`, `DP` are the usual import aliases).
WRAPPER_CLASSES = ("DataParallel", "DistributedDataParallel", "DDP", "DP", "FullyShardedDataParallel", "FSDP")


def tested_as_own_class(file: FileModel, node: ast.AST, holder: str) -> bool:
    """`node` runs only where `holder` is an instance of a class that is not a wrapper: in the body of
    `if isinstance(model, GFV):` (lint heldout19 u046: the checkpoint reads `model.glancer` and saves
    `model.state_dict()` only where the model is the bare GFV, its DDP path saving through another
    arm). There `holder` is not a DataParallel / DDP wrapper, whatever other paths make it."""
    for branch, arm in arms(file, node):
        test = branch.test
        if arm != "body" or type(test) is not ast.Call or type(test.func) is not ast.Name \
                or test.func.id != "isinstance" or len(test.args) != 2 or ast.unparse(test.args[0]) != holder:
            continue
        classes = test.args[1].elts if type(test.args[1]) is ast.Tuple else [test.args[1]]
        names = [(c.attr if type(c) is ast.Attribute else c.id if type(c) is ast.Name else "") for c in classes]
        if all(name and name not in WRAPPER_CLASSES and not name.endswith("DataParallel") for name in names):
            return True
    return False
