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


def ruled_out(file: FileModel, node: ast.AST) -> bool:
    """`node` sits in an `if` arm that the file's own constants never take: the test reads only
    literals and module-level names bound once, to a literal (`random_sample = True`, then
    `if not random_sample:`)."""
    child = node
    for up in file.ancestors(node):
        if type(up) is ast.If and child is not up.test:
            truth = fixed_truth(file, up.test)
            if truth is not None and truth != (child in up.body):
                return True
        child = up
    return False


def fixed_truth(file: FileModel, test: ast.expr) -> bool | None:
    """The value of a test the file fixes: literals, `not`, `and` / `or`, and module-level names
    bound once in the whole file to a literal; None where anything else decides it."""
    if type(test) is ast.Constant:
        return bool(test.value)
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        inner = fixed_truth(file, test.operand)
        return None if inner is None else not inner
    if type(test) is ast.BoolOp:
        values = [fixed_truth(file, v) for v in test.values]
        if type(test.op) is ast.And:
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    if type(test) is ast.Name:
        found = file.lookup(test)
        at_top = file.bindings.get((file.tree, test.id), [])
        if not found or len(found) != 1 or len(at_top) != 1 or found[0] is not at_top[0]:
            return None
        binding = at_top[0]
        if binding.kind != "value" or binding.path or type(binding.value) is not ast.Constant:
            return None
        if any(type(n) is ast.Global and test.id in n.names for n in ast.walk(file.tree)):
            return None  # a function may rebind it
        return bool(binding.value.value)
    return None
