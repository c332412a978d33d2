"""Names a module reads that nothing in it binds: one fact, read by the rules and by the fragment reader.

(Its own module, importing nothing of the linter: the model asks the fragment reader, which asks this.)
"""

from __future__ import annotations

import ast
import builtins

IMPORTS = (ast.Import, ast.ImportFrom)
KNOWN = set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__", "__builtins__"}


def unbound(tree: ast.AST) -> set[str]:
    """Names the code reads that nothing in it binds anywhere (scopes are not
    followed: a name bound anywhere counts as bound)."""
    bound: set[str] = set()
    loaded: set[str] = set()
    for node in ast.walk(tree):
        if type(node) is ast.Name:
            (loaded if type(node.ctx) is ast.Load else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif type(node) is ast.arg:
            bound.add(node.arg)
        elif isinstance(node, IMPORTS):
            bound.update((a.asname or a.name).split(".", 1)[0] for a in node.names)
        elif type(node) is ast.ExceptHandler and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            bound.add(node.name)
        elif type(node) is ast.MatchMapping and node.rest:
            bound.add(node.rest)
    return loaded - bound - KNOWN
