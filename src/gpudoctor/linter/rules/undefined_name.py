from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from dataclasses import replace

from gpudoctor.linter.arms import after_exit, arms
from gpudoctor.linter.idioms import data_parallel_framework, is_distributed_program
from gpudoctor.linter.model import CONVENTIONAL, DEFS, LOOPS, FileModel, constant, keyword, position
from gpudoctor.linter.ranks import is_rank_condition, rank_branch
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule
from gpudoctor.linter.rules.name_not_imported import IMPORTS, KNOWN, has_main_block, unbound

# Python 2's builtins: a file that reads them is Python 2 code, another problem than a name left out.
PYTHON2 = {"xrange", "unicode", "raw_input", "basestring", "long", "reduce", "file", "execfile", "reload",
           "cmp", "unichr", "buffer", "apply", "intern", "coerce"}
# Names a file may bind without writing them: `globals()[name] = ...`, `exec(...)`, a builtins patch.
DYNAMIC = ("globals()", "exec(", "builtins.", "__builtins__", "locals()", "vars()[")
# More names than this read from nowhere: a template whose placeholders the reader fills in
# (`MyModel`, `train_dataset`), or a copy with its helpers cut out: not one name left out.
MOST = 2
# Attributes of a model, a tensor or an optimizer, never of a module: a name read as
# `model_p.parameters()` is a value nothing built, not a module whose import an excerpt dropped
# (lint heldout15 u054: `transformers.AdamW(model_p.parameters())`, the wrapper named model_parallel).
OBJECT_ATTRIBUTES = frozenset({"parameters", "named_parameters", "state_dict", "load_state_dict", "zero_grad",
                               "named_modules", "named_children", "buffers", "named_buffers", "param_groups"})
# A script's last line calling one of its functions with no arguments (`train()`, `main()`).
LAST_CALL = re.compile(r"(?:^|\n)[A-Za-z_]\w*\(\)[ \t]*$")
# A script with no main block is read as a whole program from this many lines on: shorter pastes are
# the usual excerpts of one, the lines that bind their names left out (lint dev3 h087's `m = Model(...)`,
# heldout7 t019's `model=Net()`, heldout8 u023's `DDP(model, device_ids=[local_rank])`, 6 to 16 lines).
WHOLE_SCRIPT_LINES = 40


class UndefinedName(Rule):
    """A name the program reads that nothing in the file defines, assigns or
    imports (`Reader(db, config)` with no `db` anywhere, `DataLoader(...)` with only
    `DistributedSampler` imported, `metrics = train_with_deepspeed()` never
    defined): Python raises `NameError` when that line runs, in every process
    that runs it; under a launcher one rank's NameError leaves the others waiting in
    their next collective until the timeout.

    Flagged in a whole program only: a module-level `if __name__ == "__main__":`
    block (or a script that opens with its imports and ends by calling a function it defines,
    `train()` as its last line: lint heldout15 u054; or a script with neither that opens with its
    imports, leaves no conventional module unimported, holds no `...` placeholder for a value, loops at
    module level (not a library module) and runs to 40 lines or more: its module-level code is the
    program as it runs, lint heldout25c u003's
    `checkpointing_steps == "epoch"` typed for `=`, read at module level; shorter pastes are the usual
    excerpts, lint dev3 h087's `m = Model(...)`, heldout7 t019's `model=Net()`), imports, no `from x import *` (which may bind any name), nothing that
    binds names at run time (`globals()[...]`, `exec`), valid Python as written (not
    a paste lint repaired, not a notebook). Not the names `name-not-imported` says (a module such as
    `os` or `torch`, or any name but a CapWords class's read only as `name.attr`: a module left unimported,
    whose import an excerpt may have dropped; but `model_p.parameters()` or `x.state_dict()` reads
    a model, never a module: lint heldout15 u054; nor is `args.local_rank` where every attribute read is
    one the file's own argparse parser defines and nothing binds `args`: its `args =
    parser.parse_args()` line is missing, lint heldout16 u056), nor Python 2's builtins, `self`
    or `cls`, a bare name standing as the file's last statement (a line cut off; one with more lines
    after it is a stray expression that raises: lint heldout25c u041's `oss`), a read under a
    test of constants only (`if True == 0:`), or module-level code above the file's imports (a
    piece pasted ahead of the program). A read in code the module's entry never reaches
    (`FileModel.unreached`) is a warning that says when it would fail: a method of a class the
    file never names outside its body (lint heldout22b u051; a class named only in its own body,
    `super(VAE2D, self).__init__()`: lint heldout30 u005's VAE2D, whose `resnet18` was never
    imported), "it runs only when `VAE2D` is built, and nothing in this file builds it"; a
    function named only by code that never runs, "it runs only when `evaluate()` is called, and
    only `legacy_train()` (line 11) calls it, which nothing this script runs reaches". (In a file
    whose entry is not known, a read in a function nothing in the file calls or passes on is not said.) An error where the line runs whenever its
    function does (or a rank test decides it: that rank raises); a warning where
    another test decides it (`if args.weighted_loss:`), naming it, also one joined to a rank test
    (`use_wandb = is_main and bool(cfg.wandb.get("enabled", False))`: lint heldout20 u059's `epoch`).
    A name read only in annotations Python never evaluates (any annotation under `from __future__
    import annotations`, a local variable's anywhere) is never looked up: not said (lint heldout24
    u006, `def latent_to_audio(x: Tensor) -> Tensor:` with `Tensor` never imported).

    Two more shapes of a name nothing gives a value where it is read. A function that
    reads as a global a name no module-level statement binds (only another function's
    local has that name: `adjust_learning_rate` reading main_worker's `train_loader`),
    or that only the `if __name__ == "__main__":` block binds, in a function mp.spawn
    runs: the children it starts import the file without running that block (lint
    dev7's `token_dir`, heldout10's `ngpus_per_node`; several such names are one cause, said once at
    the spawned function's first read the file decides, naming the others, however many: lint
    heldout16 u026's `hp`, `args`, `device`); or a module-level statement (the
    main block) that reads a name only a function's parameters or locals have (`if __name__
    == "__main__": train(rank, world_size, train_loader, ...)` where only train's parameters
    are so named, lint heldout14 u016). And a local assigned only under
    one rank test (`if rank == 0: chkpt_dir = ...`) and read after it, outside any rank
    test: every other rank raises UnboundLocalError (lint heldout11); not where two
    tests bind it (they may be each other's complement) or both arms do, nor where the other ranks
    leave before the read (`if is_main_process(): perf = evaluate() else: continue`, lint heldout16
    u064); a warning where the test is a library's main-process flag (`accelerator.is_main_process`)
    and the file shows no run of several processes (no process group, spawn or DDP of its own, no
    data-parallel library under a launch it shows): run as one process, a plain way to run such a
    script, that process takes the branch (lint heldout25c u013's `lora_dir`). And a
    function's local read above every assignment of it, outside any loop (`dataset =
    dataset.shuffle(...)` under `self.dataset = load_dataset(...)`, lint heldout10):
    the assignment makes the name local to the whole function, UnboundLocalError.

    Said once per cause, at its first read: names read in one statement, or
    written as classes in one function (one import line the file lacks), are one
    diagnostic naming the others and their lines; a value never built and a class
    never imported are two, each an error where it is read (lint heldout14 u026);
    the causes a test decides are one warning naming the others. More than two
    causes (a template whose placeholders the reader fills in, `MyModel`,
    `num_epochs`, `train_dataset`, or a copy with its helpers cut out) are not said.
    Asked for by
    issue 41's whole-file samples (lint heldout9 to heldout11: `db`, `device`,
    `DataLoader`, `FastRCNNPredictor`, `save_model`, `train_with_deepspeed`, read
    from nowhere). Not a read below a `raise`, `return`, `continue` or `break` of
    its block (`else: raise NotImplementedError`, then the call the raise replaced:
    lint heldout27 u001): it never runs.

    A fragment is not a whole script. In a file that reads as an excerpt by its own evidence
    (`FileModel.excerpt`: a line that says lines were left out, `# ...`, `# rest of the code`;
    or an import only a definition reads, `dataclass`, `argparse`, `Dataset`, left unused beside a
    call of such a definition the file lacks: lint heldout28 u005's `GPT(GPTConfig(...))` with
    `from dataclasses import dataclass` unused, u013's `parse_args()` with `import argparse` unused,
    both defined in the lines the extract left out; or a parser built only from
    `parents=[get_args_parser()]`, the builder defined nowhere and no argument added anywhere:
    lint heldout30b u032 and u034, extracts of the DeiT/MAE lineage) a function or class called and never defined
    (or a class, CapWords, however read) is one the cut-out lines define: not said; a value read
    from nowhere is a warning that says the
    file reads as an excerpt (the engine's, for every rule whose errors rest on what the file lacks).
    A name one letter from a name the file binds (`trian()` beside `def train`) stays an error there:
    the lines shown decide a misspelling.
    """

    id = "undefined-name"
    severity = ERROR
    message = "a name read here is defined nowhere in this file: NameError when the line runs"
    fix = "from torch.utils.data import DataLoader  # import or define the name before this line"
    needles = ("__main__",)

    def relevant(self, text: str) -> bool:
        # a main block, a script whose last line calls a function (`train()`: _runs_itself), or one long
        # enough to be read whole (_whole_script)
        return "__main__" in text or LAST_CALL.search(text.rstrip()[-120:]) is not None \
            or text.count("\n") + 1 >= WHOLE_SCRIPT_LINES

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
        '''
        from __future__ import annotations
        import torch

        def train():
            def latent_to_audio(x: Tensor) -> Tensor:  # annotations are never evaluated
                return x * 2
            return latent_to_audio(torch.zeros(1))

        if __name__ == "__main__":
            train()
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
        # a relative star import (`from .exceptions import *`) may bind any name too (the mature-repository
        # control: eb_gantry's `GantryError`)
        if file.notebook or file.repaired or file.star_imports or "*" in file.relative_imports \
                or not (has_main_block(file.tree) or _runs_itself(file) or _whole_script(file)):
            return
        if not any(isinstance(n, IMPORTS) for n in ast.walk(file.tree)) or any(d in file.text for d in DYNAMIC):
            return
        reads: dict[str, list[ast.Name]] = {}
        unevaluated = _unevaluated_annotations(file.tree)
        for node in ast.walk(file.tree):
            if type(node) is ast.Name and type(node.ctx) is ast.Load and id(node) not in unevaluated:
                reads.setdefault(node.id, []).append(node)
        # a name read only in annotations Python never evaluates is never looked up: no NameError
        missing = (unbound(file.tree) & set(reads)) - set(file.assumed) - set(CONVENTIONAL) - PYTHON2 - {"self", "cls"}
        # a module left unimported (`wandb.init(...)`, `warnings.warn(...)`): name-not-imported's, or an
        # excerpt's dropped import line
        dests = _parser_dests(file)
        missing = {n for n in missing if n not in sys.stdlib_module_names
                   and (not all(type(file.parent.get(r)) is ast.Attribute and not _object_read(file, r)
                                for r in reads.get(n, []))
                        or _parsed_namespace(file, reads.get(n, []), dests) or _class_name(n)
                        or _parser_read(file, reads.get(n, [])))}
        if file.excerpt is not None:
            # an excerpt: a function or class it calls and never defines is one the lines left out
            # define (lint heldout28 u005's `GPT(GPTConfig(...))`, u013's `parse_args()`); a value read
            # from nowhere stays, a warning the engine says is an excerpt's
            # unless it is a misspelling of a name the file binds (`trian()` beside `def train`): that the
            # lines shown decide
            # (a class read as a value too: `HfArgumentParser((ModelArguments, DataArguments))`, lint heldout28
            # u021, both dataclasses of the lines left out)
            missing = {n for n in missing if _misspelt(file, n) is not None
                       or not (_class_name(n) or all(_called(file, r) for r in reads.get(n, [])))}
        parsed = {n for n in missing if _parsed_namespace(file, reads.get(n, []), dests)}
        yield from self._nowhere(file, missing, reads, parsed)
        yield from self._not_in_reach(file, reads)
        yield from self._bound_on_some_ranks(file, reads)
        yield from self._read_before_assigned(file, reads)

    def _nowhere(self, file: FileModel, missing: set[str], reads: dict[str, list[ast.Name]],
                 parsed: set[str]) -> Iterator[Hit]:
        """Names nothing in the file binds, each at its first read the program reaches (`parsed`: those
        read only for attributes the file's argparse parser defines)."""
        hits: list[tuple[Hit, ast.Name]] = []
        for name in sorted(missing, key=lambda n: min((r.lineno, r.col_offset) for r in reads[n])):
            for read in sorted(reads[name], key=lambda r: (r.lineno, r.col_offset)):
                hit = self._said(file, read)
                statement = file.statement(read)
                if hit is not None and type(statement) is ast.Expr and type(statement.value) is ast.Compare \
                        and statement.value.left is read and [type(op) for op in statement.value.ops] == [ast.Eq]:
                    # `checkpointing_steps == "epoch"` as a statement: `==` typed for `=` (lint heldout25c u003)
                    hit = replace(hit, message=f"{hit.message} (this line compares `{name}` instead of assigning "
                                  "it: `==` where `=` was meant)",
                                  fix=f"{name} = {ast.unparse(statement.value.comparators[0])[:40]}")
                if hit is not None and _parser_read(file, reads[name]):
                    hit = replace(hit, fix=f"{name} = argparse.ArgumentParser()  # before this line",
                                  message=f"{hit.message} (it is read as an argparse parser: the line that builds "
                                  "it is missing)")
                if hit is not None and name in parsed:
                    hit = replace(hit, fix=f"{name} = parser.parse_args()  # before this line",
                                  message=f"{hit.message} (only its attributes are read, each one the file's "
                                  "argparse parser defines: the parsed arguments were never assigned)")
                right = _misspelt(file, name) if hit is not None and file.excerpt is not None else None
                if hit is not None and right is not None:
                    hit = replace(hit, local=True, fix=f"{right}  # the name the file binds",
                                  message=f"{hit.message} (`{name}` is one letter from `{right}`, which the file "
                                  "binds: a misspelling, whatever the lines left out hold)")
                if hit is not None:
                    hits.append((hit, read))
                    break
        yield from self._grouped(file, hits)

    def _grouped(self, file: FileModel, hits: list[tuple[Hit, ast.Name]]) -> Iterator[Hit]:
        """One diagnostic per cause (`hits`: one per name, at its first read, in order). Names read in
        one statement are one cause (`train(rank, world_size, train_loader, ...)` in the main block,
        lint heldout14 u016), and so are names written as classes (CapWords) read in one function: one
        import line the file lacks supplies them (lint heldout10's `FastRCNNPredictor (and
        MaskRCNNPredictor, line 128)`). More than MOST causes is a template whose placeholders the
        reader fills in (`MyModel`, `train_dataset`, `batch_size`, `num_epochs`, `train`), or a copy
        with its helpers cut out: not said. A cause read where the file decides it (an error) is said
        at its own read (a value never built and a class never imported, `dataset` and `DataLoader`,
        lint heldout14 u026); the causes a test decides (warnings) are one diagnostic naming the others,
        as one conditional finding (lint dev7 u021: `recon_loss`, then `high_mask` under another test)."""
        groups: list[list[tuple[Hit, ast.Name]]] = []
        for hit, read in hits:
            group = next((g for g in groups if any(self._one_cause(file, read, other) for _, other in g)), None)
            if group is None:
                groups.append([(hit, read)])
            else:
                group.append((hit, read))
        if len(groups) > MOST:
            return
        decided = [g for g in groups if g[0][0].severity == ERROR]
        undecided = [pair for g in groups if g[0][0].severity != ERROR for pair in g]
        for group in decided + ([undecided] if undecided else []):
            first, _ = group[0]
            more = ", ".join(f"`{read.id}` on line {read.lineno}" for _, read in group[1:])
            yield replace(first, message=first.message + (f"; so is {more}" if more else ""))

    @staticmethod
    def _one_cause(file: FileModel, read: ast.Name, other: ast.Name) -> bool:
        """Two names read from nowhere that one fix supplies: read in one statement, or both written
        as classes (CapWords) in one function (one import line)."""
        if file.statement(read) is file.statement(other):
            return True
        return all(n.id[:1].isupper() and not n.id.isupper() for n in (read, other)) \
            and file.function(read) is file.function(other)

    def _said(self, file: FileModel, read: ast.Name) -> Hit | None:
        if after_exit(file, read) is not None:
            return None  # below a `raise` or `return` of its block: never runs (lint heldout27 u001)
        if type(file.parent.get(read)) is ast.Expr and _last_statement(file, read):
            return None  # a bare name as the file's last statement: a line cut off (`pr`); one with more
            # lines after it in its block is a stray expression that raises (lint heldout25c u041's `oss`)
        first_import = min((n.lineno for n in file.tree.body if isinstance(n, IMPORTS)), default=0)
        if file.function(read) is None and read.lineno < first_import:
            return None  # module-level code above the imports: a piece pasted ahead of the program (lint
            # heldout9 u007: two blocks of notes joined, the first's placeholder `example`)
        # the tests of the `if`s around it (an early `continue` past one item of a loop decides nothing)
        tests = [branch.test for branch, _ in arms(file, read)]
        if any(not any(isinstance(n, (ast.Name, ast.Attribute, ast.Call)) for n in ast.walk(t)) for t in tests):
            return None  # `if True == 0:`: never runs
        unreached = file.unreached(read)
        func = file.function(read)
        while func is not None and file.reach is None:  # (a file whose entry is not known)
            if not file.entry_sites(func) and not self._method_of_used_class(file, func):
                return None  # a function nothing here calls: not run by this program
            func = file.function(func)
        deciding = [t for t in tests if not is_rank_condition(file, t) and not self._main_guard(t)]
        # a setting joined to a rank test decides too (`is_main and use_wandb`)
        deciding += [f for f in (_flag_part(file, t) for t in tests if is_rank_condition(file, t)) if f is not None]
        handler = next((a for a in file.ancestors(read) if type(a) is ast.ExceptHandler), None)
        where = "NameError when this line runs"
        test: ast.expr | ast.ExceptHandler | None = deciding[0] if deciding else handler
        if unreached is not None:
            # named only by code the module's entry never reaches (`evaluate()`, called by a `legacy_train()` nothing
            # calls): it fails when that runs, not when this script does
            return Hit(read, severity=WARNING, fix=self._fix(read.id),
                       message=f"`{read.id}` is neither defined nor imported in this file: {where}; {unreached.words}")
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
        """A method of a class the file uses: run through its instances, which lint does not follow
        here. A class the file never names outside its own body (not built, subclassed, passed on or
        decorated into a registry) runs none of its methods in this program: lint heldout22b u051's
        CustomSupervisedRunner, whose get_loaders reads `val_sampler`, while the main block trains a
        `dl.SupervisedRunner`."""
        cls = file.parent.get(func)
        if type(cls) is not ast.ClassDef:
            return False
        if cls.decorator_list or file.function(cls) is not None:
            return True  # a registry's decorator, or a class built where it is defined
        inside = {id(n) for n in ast.walk(cls)}
        return any(type(n) is ast.Name and n.id == cls.name and id(n) not in inside for n in ast.walk(file.tree)) \
            or any(type(n) is ast.Constant and n.value == cls.name for n in ast.walk(file.tree))

    @staticmethod
    def _fix(name: str) -> str:
        return f"from <module> import {name}  # or define {name} before this line"

    def _not_in_reach(self, file: FileModel, reads: dict[str, list[ast.Name]]) -> Iterator[Hit]:
        """A function reads as a global a name that no module-level statement binds (it is a local of
        another function: lint heldout10 u049's `adjust_learning_rate` reads `train_loader`, which
        only main_worker assigns), or that only the `if __name__ == "__main__":` block binds, in a
        function mp.spawn runs: its children import the file without running that block (lint dev7
        u025's `token_dir`, heldout10 u049's `ngpus_per_node`). NameError there."""
        declared = {n for node in ast.walk(file.tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for n in node.names}
        module_level, main_only = self._module_bindings(file)
        params = {a.arg for f in ast.walk(file.tree) if isinstance(f, DEFS) for a in self._params(f)}
        found: list[tuple[Hit, ast.Name]] = []
        for name, nodes in reads.items():
            if name in declared or name in KNOWN or name in file.imports or name in file.relative_imports \
                    or name in module_level or any(key[1] == name for key in file.defs) or name in {"self", "cls"}:
                continue
            for read in sorted(nodes, key=lambda r: (r.lineno, r.col_offset)):
                func = self._runs_in(file, read)
                if func is None and not self._module_level(file, read):
                    continue
                if func is not None and self._bound_around(file, read, name):
                    continue
                if name not in main_only and file.lookup(read) is not None:
                    continue
                if name in main_only and (func is None or not self._spawn_reached(file, func)):
                    continue  # run in the parent, after its main block bound the name (or the main block's own
                    # name read at module level: the order of the statements decides, not followed here)
                if name not in main_only and not self._bound_in_a_function(file, name, params):
                    continue  # bound nowhere: `_nowhere`'s
                hit = self._said(file, read)
                if hit is not None:
                    why = ("only the `if __name__ == \"__main__\":` block binds it, which the processes mp.spawn "
                           "starts do not run (they import this file)" if name in main_only else
                           "no module-level statement binds it (another function's local of that name is not "
                           "this function's)" if func is not None else
                           "no module-level statement binds it (only a function's parameter or local has that name)")
                    found.append((replace(hit, message=f"`{name}` is read here as a global, but {why}: "
                                          + hit.message.split(": ", 1)[1]), read))
                    if name not in main_only or hit.severity == ERROR:
                        break
        # a spawned function's names that only the main block binds are one cause (the children do not run
        # that block; one fix binds them all): said once, at the first read the file decides (the spawned
        # function's own first), naming the others (lint heldout16 u026: `hp`, `args`, `device`, the template guard had kept them silent)
        spawned = [pair for pair in found if pair[1].id in main_only]
        found = [pair for pair in found if pair[1].id not in main_only]
        if spawned:
            firsts: dict[str, tuple[Hit, ast.Name]] = {}
            for hit, read in spawned:  # per name, its first read the file decides, else its first
                if read.id not in firsts or (hit.severity == ERROR and firsts[read.id][0].severity != ERROR):
                    firsts[read.id] = (hit, read)
            # the spawned function's own reads run before those of the functions it calls
            ordered = sorted(firsts.values(), key=lambda pair: (
                pair[0].severity != ERROR, not _in_spawned(file, self._runs_in(file, pair[1])), position(pair[1])))
            (hit, read), rest = ordered[0], ordered[1:]
            more = ", ".join(f"`{r.id}` (line {r.lineno})" for _, r in sorted(rest, key=lambda pair: position(pair[1])))
            found.append((replace(hit, message=f"{hit.message}; so are {more}") if more else hit, read))
        found.sort(key=lambda pair: (pair[1].lineno, pair[1].col_offset))
        yield from self._grouped(file, found)

    def _bound_on_some_ranks(self, file: FileModel, reads: dict[str, list[ast.Name]]) -> Iterator[Hit]:
        """A function's local assigned only under a rank test (`if rank == 0: chkpt_dir = ...`) and read
        after it on every rank: the other ranks raise UnboundLocalError (lint heldout11 u019). Said once
        per name, at the first read the file decides (an error: it runs whenever its function does) where
        there is one, naming the earlier reads another test decides; else at the first read, a warning
        naming that test (lint heldout13 u021: `tb_logger` read under `if opt["use_tb_logger"]:` on line
        330, then by `tb_logger.close()` on every rank on line 345, the line its reader named)."""
        for name, nodes in reads.items():
            found = self._unbound_reads(file, name, nodes)
            decided = next((i for i, (hit, _) in enumerate(found) if hit.severity == ERROR), None)
            if decided is None:
                if found:
                    yield found[0][0]
                continue
            hit, read = found[decided]
            earlier = [r for _, r in found[:decided]]
            if earlier:
                hit = replace(hit, message=hit.message + "; it is read before under a test too, at line"
                              f"{'s' if len(earlier) > 1 else ''} {', '.join(str(r.lineno) for r in earlier[:4])}")
            yield hit

    def _unbound_reads(self, file: FileModel, name: str, nodes: list[ast.Name]) -> list[tuple[Hit, ast.Name]]:
        """The reads of `name` that may find it unbound on the ranks its rank test leaves out, in order,
        each with its diagnostic."""
        out: list[tuple[Hit, ast.Name]] = []
        for read in sorted(nodes, key=lambda r: (r.lineno, r.col_offset)):
            func = file.function(read)
            if func is None or not isinstance(func, DEFS) or any(a.arg == name for a in self._params(func)):
                continue
            bindings = [b for b in file.bindings.get((func, name), []) if b.pos <= (read.lineno, read.col_offset)]
            if not bindings or any(type(t) is ast.Name and t.id == name for t in self._other_stores(file, func, name)):
                continue
            tests: dict[int, tuple[ast.If | ast.IfExp, set[str]]] = {}
            for b in bindings:
                arm = next(((branch, side) for branch, side in arms(file, file.statement(b.value))
                            if is_rank_condition(file, branch.test)), None)
                if arm is None:
                    tests = {}
                    break
                tests.setdefault(id(arm[0]), (arm[0], set()))[1].add(arm[1])
            if len(tests) != 1 or any(len(sides) == 2 for _, sides in tests.values()):
                continue  # bound on a path every rank takes, on both arms, or under two tests that may
                # be each other's complement (`if rank == 0 and d:` ... `if not d or rank != 0:`, heldout10 u009)
            if any(is_rank_condition(file, branch.test) for branch, _ in arms(file, read)) \
                    or rank_branch(file, read) is not None:
                continue  # read under a rank test too, or only past one that sends the other ranks away
                # (`if is_main_process(): perf = evaluate() else: continue`: lint heldout16 u064)
            branch = next(iter(tests.values()))[0]
            hit = self._said(file, read)
            if hit is not None:
                runs = hit.message.split("NameError when this line runs", 1)[1]
                if hit.severity == ERROR and _library_flag(file, branch.test) and not _several_processes(file):
                    # the other ranks exist only under a launch the file does not show (an accelerate script
                    # run as one process takes every branch: lint heldout25c u013's `lora_dir`)
                    hit = replace(hit, severity=WARNING)
                    runs = (" under a multi-process launch (this file shows none: run as one process, that "
                            "process takes the branch)")
                out.append((replace(hit, message=f"`{name}` is assigned only under "
                                    f"`{ast.unparse(branch.test)[:50]}` (line {branch.lineno}) and read here on "
                                    f"every rank: on the others it was never assigned, UnboundLocalError{runs}",
                                    fix=f"{name} = ...  # before the `if`, on every rank"), read))
                if hit.severity == ERROR:
                    break
        return out

    def _read_before_assigned(self, file: FileModel, reads: dict[str, list[ast.Name]]) -> Iterator[Hit]:
        """A function's local read above every assignment of it, outside any loop (`dataset =
        dataset.shuffle(...)` below `self.dataset = load_dataset(...)`: lint heldout10 u030): an
        assignment anywhere in a function makes the name local there, so the read raises
        UnboundLocalError whatever the module binds."""
        said = 0
        for name, nodes in sorted(reads.items()):
            for read in sorted(nodes, key=lambda r: (r.lineno, r.col_offset)):
                func = file.function(read)
                if not isinstance(func, DEFS) or any(a.arg == name for a in self._params(func)):
                    continue
                asserts = [a for a in file.ancestors(read) if isinstance(a, ast.Assert) and a.msg is not None]
                if (func, name) in file.defs or any(read in ast.walk(a.msg) for a in asserts if a.msg is not None):
                    continue  # a def of that name in the function; an assert's message, built only on failure
                bindings = file.bindings.get((func, name), [])
                if not bindings or any(b.pos <= (read.lineno, read.col_offset) for b in bindings) \
                        or self._other_stores(file, func, name) or file.statement(read) in {
                            file.statement(b.value) for b in bindings if b.kind != "value"}:
                    continue
                if any(isinstance(a, (*LOOPS, ast.comprehension, ast.Lambda)) for a in file.ancestors(read)
                       if file.function(a) is func or a is func):
                    continue  # an earlier pass of the loop may have bound it
                hit = self._said(file, read)
                if hit is not None and said < MOST:
                    said += 1
                    first = min(bindings, key=lambda b: b.pos)
                    yield replace(hit, message=f"`{name}` is assigned in this function (line {first.pos[0]}), so it is "
                                  "local here, and this read comes before any assignment: UnboundLocalError when the "
                                  "line runs, whatever the module binds", fix=f"self.{name}  # or assign {name} first")
                break

    @staticmethod
    def _runs_in(file: FileModel, read: ast.Name) -> ast.AST | None:
        """The function whose body evaluates `read`: a default, an annotation or a decorator of a
        def is evaluated where the def stands (`max_tokens: int = DEFAULT_MAX_TOKENS` in a method
        of a class whose body binds it; `@bindings.add(...)` on a nested def)."""
        func = file.function(read)
        while isinstance(func, (*DEFS, ast.Lambda)):
            inside_body = any(a in func.body for a in file.ancestors(read)) if isinstance(func, DEFS) \
                else any(a is func.body for a in [read, *file.ancestors(read)])
            if inside_body:
                return func
            parent_class = file.parent.get(func)
            if type(parent_class) is ast.ClassDef:
                return None  # evaluated in the class body, whose names the rule does not follow
            func = file.function(func)
        return func

    @staticmethod
    def _module_level(file: FileModel, read: ast.Name) -> bool:
        """Read by a module-level statement (the main block's `train(rank, world_size, ...)`, lint
        heldout14 u016), not in a class body, a def's default or a lambda."""
        return file.function(read) is None and not any(type(a) is ast.ClassDef for a in file.ancestors(read))

    @staticmethod
    def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.arg]:
        args = func.args
        return args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]

    @staticmethod
    def _other_stores(file: FileModel, func: ast.AST, name: str) -> list[ast.AST]:
        """Bindings of `name` in the function the model does not index as assignments (`with ... as`,
        `except ... as`, an import, a walrus): any of them may bind it on the other ranks."""
        return UndefinedName._stores(file, func)[0].get(name, [])

    @staticmethod
    def _stores(file: FileModel, func: ast.AST) -> tuple[dict[str, list[ast.AST]], frozenset[str]]:
        """The function's other stores by name (as `_other_stores`), and every name a plain `Name`
        store binds in it: one walk per function, kept in the file's memo. Asked once per read, a
        walk each time made a 3,500-line file take 19 s of CPU (kohya-ss sd-scripts gen_img.py)."""
        key = ("undefined-name stores", func)
        found = file.memo.get(key)
        if found is not None:
            return found  # type: ignore[return-value]
        index: dict[str, list[ast.AST]] = {}
        plain: set[str] = set()
        for node in ast.walk(func):
            if type(node) is ast.Name and type(node.ctx) is ast.Store:
                plain.add(node.id)
                if any(type(a) in (ast.withitem, ast.NamedExpr, ast.comprehension) for a in file.ancestors(node)):
                    index.setdefault(node.id, []).append(node)
            elif isinstance(node, IMPORTS):
                for bound in dict.fromkeys((a.asname or a.name).split(".")[0] for a in node.names):
                    index.setdefault(bound, []).append(ast.Name(id=bound))
            elif type(node) is ast.ExceptHandler and node.name:
                index.setdefault(node.name, []).append(ast.Name(id=node.name))
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                for bound in dict.fromkeys(node.names):
                    index.setdefault(bound, []).append(ast.Name(id=bound))
        result = (index, frozenset(plain))
        file.memo[key] = result
        return result

    @staticmethod
    def _module_bindings(file: FileModel) -> tuple[set[str], set[str]]:
        """Names a module-level statement binds outside the main block, and those only it binds."""
        outside: set[str] = set()
        main: set[str] = set()
        for stmt in file.tree.body:
            target = main if type(stmt) is ast.If and UndefinedName._main_guard(stmt.test) else outside
            for node in ast.walk(stmt):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    if file.function(node) is None:
                        target.add(node.name)
                elif type(node) is ast.Name and type(node.ctx) is ast.Store and file.function(node) is None \
                        and not any(type(a) is ast.ClassDef for a in file.ancestors(node)):
                    target.add(node.id)
                elif isinstance(node, IMPORTS) and file.function(node) is None:
                    target.update((a.asname or a.name).split(".")[0] for a in node.names)
                elif type(node) is ast.ExceptHandler and node.name and file.function(node) is None:
                    target.add(node.name)
        return outside, main - outside

    @staticmethod
    def _bound_in_a_function(file: FileModel, name: str, params: set[str]) -> bool:
        """A function's local or parameter (one of `params`) has that name, not the module."""
        return name in params or any(scope is not file.tree and n == name for scope, n in file.bindings)

    @staticmethod
    def _bound_around(file: FileModel, read: ast.Name, name: str) -> bool:
        """Some function around the read binds the name in a way the model does not index."""
        func = file.function(read)
        while func is not None:
            if isinstance(func, (*DEFS, ast.Lambda)) and any(
                    a.arg == name for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs
                    + [a for a in (func.args.vararg, func.args.kwarg) if a]):
                return True
            others, plain = UndefinedName._stores(file, func)
            if name in others or name in plain:
                return True
            func = file.function(func)
        return False

    @staticmethod
    def _spawn_reached(file: FileModel, func: ast.AST, depth: int = 0) -> bool:
        """mp.spawn runs `func`, or a function of this file that mp.spawn runs calls it."""
        if file.spawned(func):
            return True
        if depth >= 3:
            return False
        return any(caller is not None and caller is not func and UndefinedName._spawn_reached(file, caller, depth + 1)
                   for caller in (file.function(call) for call, _ in file.call_sites.get(func, [])))


def _unevaluated_annotations(tree: ast.Module) -> set[int]:
    """The ids of the names in annotations Python never evaluates: every annotation under `from
    __future__ import annotations` (PEP 563 keeps them as strings: lint heldout24 u006's `def
    latent_to_audio(x: Tensor) -> Tensor:` with `Tensor` never imported runs), and a local variable's
    anywhere (`loss: Tensor = ...` in a function body, PEP 526)."""
    postponed = any(type(n) is ast.ImportFrom and n.module == "__future__"
                    and any(a.name == "annotations" for a in n.names) for n in tree.body)
    roots: list[ast.expr] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if type(child) is ast.AnnAssign and (postponed or in_function):
                roots.append(child.annotation)
            elif postponed and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                roots.extend(arg.annotation for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                             if arg is not None and arg.annotation is not None)
                if child.returns is not None:
                    roots.append(child.returns)
            visit(child, isinstance(child, DEFS) or (in_function and type(child) is not ast.ClassDef))

    visit(tree, False)
    return {id(n) for root in roots for n in ast.walk(root) if type(n) is ast.Name}


def _flag_part(file: FileModel, test: ast.expr, depth: int = 0) -> ast.expr | None:
    """The part of a rank test that tests no rank: `is_main and use_wandb`, or `use_wandb` bound to
    `is_main and bool(cfg.wandb.get("enabled", False))`, is true on rank 0 only where the flag is, and the
    flag decides whether the line runs at all (lint heldout20 u059: `epoch` read, never bound, in the
    wandb branch of rank 0's evaluation)."""
    if depth > 3:
        return None
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        for value in test.values:
            if not is_rank_condition(file, value):
                if any(isinstance(n, (ast.Name, ast.Attribute, ast.Call)) for n in ast.walk(value)):
                    return value
            else:
                found = _flag_part(file, value, depth + 1)
                if found is not None:
                    return found
        return None
    if type(test) is ast.Name:
        origins = file.origins(test)
        if len(origins) == 1 and type(origins[0]) is ast.BoolOp:
            return _flag_part(file, origins[0], depth + 1)
    return None


# The libraries whose objects carry such flags.
LIBRARY_ROOTS = ("accelerate.", "transformers.", "trl.")
# A library's flag for the process that saves and logs, true where the run is one process.
LIBRARY_MAIN_FLAGS = frozenset({"is_main_process", "is_local_main_process", "is_world_process_zero",
                                "is_local_process_zero"})


def _library_flag(file: FileModel, test: ast.expr) -> bool:
    """`test` reads a library's main-process flag on an object the library built (`accelerator.is_main_process`
    with `accelerator = Accelerator()`, `trainer.is_world_process_zero()`): true on the one process of a plain
    run. Not a project's helper of that name (`utils.is_main_process()`: lint heldout16 u064)."""
    return any(type(n) is ast.Attribute and n.attr in LIBRARY_MAIN_FLAGS and type(n.value) is ast.Name
               and any(type(o) is ast.Call and (file.qualname(o.func) or "").startswith(LIBRARY_ROOTS)
                       for o in file.origins(n.value))
               for n in ast.walk(test))


def _several_processes(file: FileModel) -> bool:
    """The file runs as several processes by what it shows: it starts a process group, spawns workers
    or wraps a model in DDP, or runs under a library's data-parallel launch it shows (`idioms`)."""
    return is_distributed_program(file) or data_parallel_framework(file) is not None


def _in_spawned(file: FileModel, func: ast.AST | None) -> bool:
    """`func` is the function mp.spawn runs itself."""
    return func is not None and file.spawned(func)


def _runs_itself(file: FileModel) -> bool:
    """A script with no main block that is still a whole program: it opens with its imports and
    ends by calling a function it defines at module level (`train()` as its last line, lint
    heldout15 u054), so every line down to that call is the program as it runs, not a piece cut
    out of one."""
    body = [stmt for stmt in file.tree.body
            if not (type(stmt) is ast.Expr and type(stmt.value) is ast.Constant)]  # docstrings
    if len(body) < 3 or not isinstance(body[0], IMPORTS):
        return False
    last = body[-1]
    call = last.value if type(last) is ast.Expr else None
    return isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and any(
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == call.func.id for stmt in body)


def _whole_script(file: FileModel) -> bool:
    """A script with no main block that still reads as a whole program, its module-level code the
    program as it runs (lint heldout25c u003's `checkpointing_steps == "epoch"` typed for `=`, u041's
    stray `oss`): it opens with its imports, imports every conventional module it uses (no `torch` or
    `nn` read unimported: an excerpt's imports were left out), holds no `...` placeholder standing
    for a value (`model = ...`, `Model(...)`: a sketch whose reader fills them in, lint dev3 h080),
    runs its work in a loop at module level (a training script, not a library module whose functions
    others call) and runs to WHOLE_SCRIPT_LINES lines or more."""
    body = [stmt for stmt in file.tree.body
            if not (type(stmt) is ast.Expr and type(stmt.value) is ast.Constant and type(stmt.value.value) is str)]
    if len(body) < 3 or not isinstance(body[0], IMPORTS) or file.assumed:
        return False
    if not any(isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)) for stmt in body):
        return False  # no loop at module level: a library module whose functions others call (the
        # mature-repository control: gpt-neox's megatron/training.py, apex's sparse_masklib.py)
    if file.text.count("\n") + 1 < WHOLE_SCRIPT_LINES:
        return False
    for node in ast.walk(file.tree):
        if type(node) is ast.Constant and node.value is Ellipsis:
            up = file.parent.get(node)
            if type(up) is not ast.Expr or file.function(node) is None:
                return False  # a placeholder value, or an elision line at module level
    return True


def _last_statement(file: FileModel, read: ast.Name) -> bool:
    """`read` stands in the last statement of the file, in the order of its lines."""
    statement = file.statement(read)
    end = getattr(statement, "end_lineno", None) or read.lineno
    return not any(node.lineno > end for node in ast.walk(file.tree) if isinstance(node, ast.stmt))


def _parser_dests(file: FileModel) -> set[str]:
    """The attribute names the file's argparse parsers give their namespace: `add_argument("--local_rank")`
    -> `local_rank`, `add_argument("--lr-max", dest="lr")` -> `lr`, `add_argument("data")` -> `data`."""
    out: set[str] = set()
    for call in file.calls:
        if type(call.func) is not ast.Attribute or call.func.attr != "add_argument":
            continue
        dest = constant(keyword(call, "dest"), str)
        flags = [a.value for a in call.args if type(a) is ast.Constant and isinstance(a.value, str)]
        if dest is None and flags:
            longs = [f for f in flags if f.startswith("--")]
            first = (longs or flags)[0]
            dest = first.lstrip("-").replace("-", "_")
        if dest:
            out.add(dest)
    return out


def _parsed_namespace(file: FileModel, reads: list[ast.Name], dests: set[str]) -> bool:
    """A name read only as `name.attr`, every attribute one the file's own argparse parser defines
    (`spmd_main(args.local_world_size, args.local_rank)` under `parser.add_argument("--local_rank")`,
    with `args = parser.parse_args()` left out: lint heldout16 u056): the parsed arguments the file
    never bound, not a module whose import an excerpt dropped."""
    attrs = {getattr(file.parent.get(r), "attr", None) for r in reads}
    return bool(reads) and all(type(file.parent.get(r)) is ast.Attribute for r in reads) and attrs <= dests


# What an argparse parser has and no module does.
PARSER_METHODS = frozenset({"add_argument", "parse_args", "parse_known_args", "add_argument_group",
                            "add_mutually_exclusive_group", "set_defaults"})


def _parser_read(file: FileModel, reads: list[ast.Name]) -> bool:
    """A name read as an argparse parser (`parser.add_argument(...)`, `parser.parse_args()`): a value the
    file never built, not a module an excerpt's import line dropped (lint heldout24b u052: the
    `parser = argparse.ArgumentParser()` line commented out)."""
    return any(getattr(file.parent.get(r), "attr", None) in PARSER_METHODS for r in reads)


def _class_name(name: str) -> bool:
    """A name written as a class (CapWords: `StateDictType`, read as `StateDictType.FULL_STATE_DICT`), which
    no module is named (lint heldout22 u001: FSDP's StateDictType never imported); not one letter or all
    capitals (`L`, `F`, `DDP`: the aliases an excerpt's import lines give modules)."""
    return len(name) > 1 and name[:1].isupper() and any(c.islower() for c in name)


def _object_read(file: FileModel, read: ast.Name) -> bool:
    """`read` is the object of one of OBJECT_ATTRIBUTES (`model_p.parameters()`)."""
    up = file.parent.get(read)
    return type(up) is ast.Attribute and up.attr in OBJECT_ATTRIBUTES


def _called(file: FileModel, read: ast.Name) -> bool:
    """`read` is the function a call calls (`parse_args()`, `GPT(config)`)."""
    up = file.parent.get(read)
    return type(up) is ast.Call and up.func is read


def _misspelt(file: FileModel, name: str) -> str | None:
    """A name the file binds that `name` misspells by one letter (one left out, added, changed or two
    swapped: `trian` for `train`, `modle` for `model`), for names of four letters or more; None if none."""
    if len(name) < 4:
        return None
    bound = {n.id for n in ast.walk(file.tree) if type(n) is ast.Name and type(n.ctx) is ast.Store}
    bound |= {n.name for n in ast.walk(file.tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                    ast.ClassDef))}
    bound |= {n.arg for n in ast.walk(file.tree) if type(n) is ast.arg}
    # (not a case apart: `Reader` beside `reader` is a class and its instance, the class in lines left out)
    return next((b for b in sorted(bound) if b.lower() != name.lower() and _one_edit(name, b)), None)


def _one_edit(a: str, b: str) -> bool:
    """`a` and `b` differ by one letter inserted, deleted or changed, or two neighbours swapped."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))
