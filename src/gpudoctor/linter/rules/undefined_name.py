from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import replace

from gpudoctor.linter.arms import arms
from gpudoctor.linter.model import CONVENTIONAL, FileModel
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule
from gpudoctor.linter.rules.name_not_imported import IMPORTS, has_main_block, unbound

# Python 2's builtins: a file that reads them is Python 2 code, another problem than a name left out.
PYTHON2 = {"xrange", "unicode", "raw_input", "basestring", "long", "reduce", "file", "execfile", "reload",
           "cmp", "unichr", "buffer", "apply", "intern", "coerce"}
# Names a file may bind without writing them: `globals()[name] = ...`, `exec(...)`, a builtins patch.
DYNAMIC = ("globals()", "exec(", "builtins.", "__builtins__", "locals()", "vars()[")
# More names than this read from nowhere: a template whose placeholders the reader fills in
# (`MyModel`, `train_dataset`), or a copy with its helpers cut out: not one name left out.
MOST = 2


class UndefinedName(Rule):
    """A name the program reads that nothing in the file defines, assigns or
    imports (`Reader(db, config)` with no `db` anywhere, `DataLoader(...)` with only
    `DistributedSampler` imported, `metrics = train_with_deepspeed()` never
    defined): Python raises `NameError` when that line runs, in every process
    that runs it; under a launcher one rank's NameError leaves the others waiting in
    their next collective until the timeout.

    Flagged in a whole program only: a module-level `if __name__ == "__main__":`
    block, imports, no `from x import *` (which may bind any name), nothing that
    binds names at run time (`globals()[...]`, `exec`), valid Python as written (not
    a paste lint repaired, not a notebook), and at most two such names in the file
    (more is a template whose placeholders the reader fills in, or a copy with its
    helpers cut out). Not the names `name-not-imported` says (a module such as
    `os` or `torch`, or any name read only as `name.attr`: a module left unimported,
    whose import an excerpt may have dropped), nor Python 2's builtins, `self`
    or `cls`, a bare name standing as a statement (a line cut off), a read under a
    test of constants only (`if True == 0:`), or a read in a function nothing in
    the file calls or passes on. An error where the line runs whenever its
    function does (or a rank test decides it: that rank raises); a warning where
    another test decides it (`if args.weighted_loss:`), naming it. Said once, at the
    first such read, naming the other names and their lines (one cause: an import
    line or a helper the file lacks). Asked for by
    issue 41's whole-file samples (lint heldout9 to heldout11: `db`, `device`,
    `DataLoader`, `FastRCNNPredictor`, `save_model`, `train_with_deepspeed`, read
    from nowhere).
    """

    id = "undefined-name"
    severity = ERROR
    message = "a name read here is defined nowhere in this file: NameError when the line runs"
    fix = "from torch.utils.data import DataLoader  # import or define the name before this line"
    needles = ("__main__",)

    VALID = (
        '''
        import torch
        from torch.utils.data import DataLoader, DistributedSampler

        def main(dataset):
            loader = DataLoader(dataset, sampler=DistributedSampler(dataset))

        if __name__ == "__main__":
            main(None)
        ''',
        '''
        import torch
        from helpers import *

        def main():
            loader = DataLoader(dataset)  # a star import may bind it

        if __name__ == "__main__":
            main()
        ''',
        '''
        import torch

        def metric(*args):
            if True == 0:
                log_metric(*args)  # never runs

        if __name__ == "__main__":
            metric(1)
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        def init_process(rank, config):
            dist.init_process_group("gloo", rank=rank, world_size=config.num_gpus)
            reader = Reader(db, config)  # flagged

        if __name__ == "__main__":
            init_process(0, None)
        ''',
        '''
        import torch
        from torch.utils.data.distributed import DistributedSampler

        def main(dataset, args):
            if args.weighted_loss:
                weights = weights.to(device)  # flagged: a warning, a flag decides it

        if __name__ == "__main__":
            main(None, None)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if file.notebook or file.repaired or file.star_imports or not has_main_block(file.tree):
            return
        if not any(isinstance(n, IMPORTS) for n in ast.walk(file.tree)) or any(d in file.text for d in DYNAMIC):
            return
        reads: dict[str, list[ast.Name]] = {}
        for node in ast.walk(file.tree):
            if type(node) is ast.Name and type(node.ctx) is ast.Load:
                reads.setdefault(node.id, []).append(node)
        missing = unbound(file.tree) - set(file.assumed) - set(CONVENTIONAL) - PYTHON2 - {"self", "cls"}
        # a module left unimported (`wandb.init(...)`, `warnings.warn(...)`): name-not-imported's, or an
        # excerpt's dropped import line
        missing = {n for n in missing if n not in sys.stdlib_module_names
                   and not all(type(file.parent.get(r)) is ast.Attribute for r in reads.get(n, []))}
        if not missing or len(missing) > MOST:
            return
        # one diagnostic, at the first such read, naming the other names and their lines: one cause
        # (the file lacks an import block's line or a helper), as its readers say it (lint heldout10's
        # `FastRCNNPredictor (and MaskRCNNPredictor, line 128)`)
        hits: list[tuple[Hit, ast.Name]] = []
        for name in sorted(missing, key=lambda n: min((r.lineno, r.col_offset) for r in reads[n])):
            for read in sorted(reads[name], key=lambda r: (r.lineno, r.col_offset)):
                hit = self._said(file, read)
                if hit is not None:
                    hits.append((hit, read))
                    break
        if hits:
            first, _ = hits[0]
            more = ", ".join(f"`{read.id}` on line {read.lineno}" for _, read in hits[1:])
            yield replace(first, message=first.message + (f"; so is {more}" if more else ""))

    def _said(self, file: FileModel, read: ast.Name) -> Hit | None:
        if type(file.parent.get(read)) is ast.Expr:
            return None  # a bare name as a statement: a line cut off (`pr`)
        # the tests of the `if`s around it (an early `continue` past one item of a loop decides nothing)
        tests = [branch.test for branch, _ in arms(file, read)]
        if any(not any(isinstance(n, (ast.Name, ast.Attribute, ast.Call)) for n in ast.walk(t)) for t in tests):
            return None  # `if True == 0:`: never runs
        func = file.function(read)
        while func is not None:
            if not file.entry_sites(func) and not self._method_of_used_class(file, func):
                return None  # a function nothing here calls: not run by this program
            func = file.function(func)
        deciding = [t for t in tests if not file.is_rank_test(t) and not self._main_guard(t)]
        handler = next((a for a in file.ancestors(read) if type(a) is ast.ExceptHandler), None)
        where = "NameError when this line runs"
        test: ast.expr | ast.ExceptHandler | None = deciding[0] if deciding else handler
        if test is not None:
            said = f"`{ast.unparse(test)[:60]}`" if isinstance(test, ast.expr) else "an except block"
            return Hit(read, severity=WARNING, fix=self._fix(read.id),
                       message=f"`{read.id}` is neither defined nor imported in this file: {where} "
                       f"(it runs when {said} does, line {test.lineno})")
        return Hit(read, severity=ERROR, fix=self._fix(read.id),
                   message=f"`{read.id}` is neither defined nor imported in this file: {where}, "
                   "in every process that reaches it")

    @staticmethod
    def _main_guard(test: ast.expr) -> bool:
        return any(type(n) is ast.Constant and n.value == "__main__" for n in ast.walk(test))

    @staticmethod
    def _method_of_used_class(file: FileModel, func: ast.AST) -> bool:
        """A method: run through its class's instances, which lint does not follow here."""
        return type(file.parent.get(func)) is ast.ClassDef

    @staticmethod
    def _fix(name: str) -> str:
        return f"from <module> import {name}  # or define {name} before this line"
