from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import DISTRIBUTED_NEEDLES, in_spawning_parent, is_distributed_program, \
    is_torch_spawn_program, launched, source
from gpudoctor.linter.model import FileModel, keyword
from gpudoctor.linter.ranks import is_rank_condition
from gpudoctor.linter.rule import Hit, Rule
from gpudoctor.linter.rules.save_all_ranks import SaveAllRanks, _single_process_arm, world_of_one

# `except` clauses that catch what a lost race raises.
CAUGHT = frozenset({"FileExistsError", "OSError", "IOError", "EnvironmentError", "Exception", "BaseException"})
# A test that the directory is there already (`if not os.path.exists(d):`): the race's window, not a rank flag.
EXISTS_TESTS = frozenset({"exists", "isdir", "lexists", "is_dir"})


class MkdirRaceAllRanks(Rule):
    """`os.makedirs(d)` or `os.mkdir(d)` without `exist_ok=True`, on every
    rank of a distributed script: the ranks create the same directory at
    the same time and every one but the first raises FileExistsError. A
    test that the directory is missing first (`if not os.path.exists(d):
    os.mkdir(d)`) does not help: every rank passes the test before any
    creates it. Asked for by issue 41's dev7 (three research scripts, each
    making its work directory this way on every rank; u034:
    `if not os.path.exists(arg.work_dir): os.mkdir(arg.work_dir)`, then
    `os.makedirs(current_work_dir)` on a timestamped path that ranks
    starting in the same second share).

    A distributed script is one `save-all-ranks` reads as one (it starts a
    process group, spawns workers or wraps a model in DDP), and the call
    runs on every rank the way `save-all-ranks` decides it: not under a
    rank test (`if rank == 0:`, an early `if rank != 0: return`, a helper
    computed from the rank), not in the process that calls mp.spawn (nor
    under `if __name__ == "__main__":` of a script that spawns its ranks),
    not under a flag this file cannot resolve (`if args.save_logs:`: it may
    be a rank flag). Not flagged either: `exist_ok` given (anything but a
    literal False), a path that holds the rank (one directory per rank), a
    call inside a `try` whose `except` catches FileExistsError (or OSError,
    Exception, a bare `except:`). A test of the path itself beside the exists test (`if output_dir and not
    os.path.exists(output_dir):`) is no flag (lint heldout29b u005).

    The process that hands a function of this file to another module's launcher
    (`start_dist_train(train, world_size, config)`: its name says it starts processes) is
    such a parent too: a folder made in `main` before that call is made once (lint
    heldout11: two forks of one audio-codec trainer); one made in `train` is flagged.

    A warning: whether the race is lost depends on the ranks sharing one
    filesystem and on timing, which the file does not say.

    The folders one file makes this way are one race, said once at the first,
    naming the other lines (lint heldout18 u010, u032: a run folder and its
    subfolders; lint heldout20 u003-u005: the save folder made at the top and
    again in the KeyboardInterrupt handler; one reader's entry each).

    Not in a file whose every process group is a literal world of one and that starts
    no processes (`init_process_group(..., world_size=1)`): one process makes the folder.
    """

    id = "mkdir-race-all-ranks"
    in_tests = False  # tests build this shape on purpose
    message = "every rank creates the same directory without exist_ok: the slower rank raises FileExistsError"
    fix = "os.makedirs(path, exist_ok=True)  # or create it on rank 0, then dist.barrier()"
    needles = ("mkdir", "makedirs")

    VALID = (
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl")
        os.makedirs(args.output_dir, exist_ok=True)
        ''',
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:
            if not os.path.exists(args.output_dir):
                os.makedirs(args.output_dir)
        dist.barrier()
        ''',
        '''
        import os
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            os.makedirs(f"logs/rank{rank}")  # one directory per rank

        if __name__ == "__main__":
            os.makedirs("logs")  # the parent, once
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
    )
    INVALID = (
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if not os.path.exists(args.work_dir):
            os.mkdir(args.work_dir)  # flagged
        ''',
        '''
        import os
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            os.makedirs("checkpoints")  # flagged

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
    )

    def relevant(self, text: str) -> bool:
        return ("mkdir" in text or "makedirs" in text) and any(n in text for n in DISTRIBUTED_NEEDLES)

    def check(self, file: FileModel) -> Iterator[Hit]:
        calls = [c for c in file.calls if file.call_name(c) in ("os.mkdir", "os.makedirs") and c.args]
        if not calls or not is_distributed_program(file) or world_of_one(file):
            return  # (a literal world of one, no process started: one process makes the folder)
        # a function of this file handed to another module's launcher (`start_dist_train(train,
        # world_size, config)`, lint heldout11) is started the way mp.spawn starts its target
        launches = launched(file)
        spawns = is_torch_spawn_program(file)
        for call in calls:
            if self._exist_ok(file, call) or self._caught(file, call):
                continue
            path = call.args[0]
            if SaveAllRanks._per_rank(file, path):
                continue  # one directory per rank
            if file.rank_guarded(call) or ((spawns or launches) and self._in_parent(file, call, set(), launches)):
                continue  # (the parent of mp.spawn, once: dev7 u025's make_dir before the spawn)
            if _single_process_arm(file, call):
                continue  # the `else` of `if args.distributed:`: one process runs there (lint heldout15 u017)
            tests = list(file.conditions(call))
            if spawns and file.function(call) is None and any(self._exists_test(test) for test in tests):
                continue  # the module's top: the parent made it before it spawned the ranks (dev7 u015)
            if any(is_rank_condition(file, test) or SaveAllRanks._made_on_some_ranks(file, test) for test in tests):
                continue
            if any(SaveAllRanks._unresolved_flag(file, part) for test in tests for part in self._flags(test, path)):
                continue  # (`if args.save:` may be a rank flag set elsewhere: no guess)
            name = file.call_name(call) or "os.makedirs"
            where = source(path)
            tested = any(self._exists_test(part) for test in tests for part in (
                test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]))
            if spawns and file.function(call) is None:
                message = (f"{name}({where}) without exist_ok at the top of a script that starts its ranks "
                           "with mp.spawn: the parent creates it, then each spawned rank runs the module's top "
                           "again and raises FileExistsError")
            elif tested:
                message = (f"every rank tests and creates {where} ({name}, no exist_ok): all of them can pass "
                           "the test before one creates it, and the rank that loses the race raises "
                           "FileExistsError (unless each rank has its own filesystem)")
            else:
                message = (f"every rank creates {where} ({name}, no exist_ok): the rank that comes second "
                           "raises FileExistsError (unless each rank has its own filesystem or path)")
            # the folders one file makes are one race: said once, at the first (lint heldout18 u032: logs/,
            # logs/{ds}, ..., checkpoints/{ds}/{net}/{ts}; heldout20 u003: the top's and a handler's; one entry)
            yield Hit(call, message=message, fix=f"os.makedirs({where}, exist_ok=True)", cause="every rank makes")

    def _in_parent(self, file: FileModel, node: ast.AST, seen: set[ast.AST],
                   launches: dict[ast.AST, list[ast.Call]]) -> bool:
        """`node` runs only in the process that calls mp.spawn (or another module's launcher): beside
        that call, under the script's `if __name__ == "__main__":`, or in a function (not started by
        either) called only from there."""
        if in_spawning_parent(file, node):
            return True
        func = file.function(node)
        if func is None:
            return file.under_main_guard(node)
        if file.spawned(func) or func in launches or func in seen:
            return False
        seen.add(func)
        sites = file.entry_sites(func)
        return bool(sites) and all(self._in_parent(file, site, seen, launches) for site in sites)

    @staticmethod
    def _exist_ok(file: FileModel, call: ast.Call) -> bool:
        """`exist_ok=` given anything but a literal False (or makedirs' third positional argument)."""
        value = keyword(call, "exist_ok")
        if value is None and file.call_name(call) == "os.makedirs" and len(call.args) >= 3:
            value = call.args[2]
        if value is None:
            return any(kw.arg is None for kw in call.keywords)  # `**options`: cannot tell
        return not (type(value) is ast.Constant and value.value in (False, 0, None))

    @staticmethod
    def _caught(file: FileModel, call: ast.Call) -> bool:
        """The call sits in the body of a `try` that catches what a lost race raises."""
        child: ast.AST = call
        for above in file.ancestors(call):
            if isinstance(above, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return False
            if isinstance(above, ast.Try) and child in above.body:
                for handler in above.handlers:
                    if handler.type is None:
                        return True
                    names = [n.id for n in ast.walk(handler.type) if isinstance(n, ast.Name)]
                    names += [n.attr for n in ast.walk(handler.type) if isinstance(n, ast.Attribute)]
                    if CAUGHT & set(names):
                        return True
            child = above
        return False

    @classmethod
    def _flags(cls, test: ast.expr, path: ast.expr) -> list[ast.expr]:
        """The parts of `test` that may be flags: not a test that the folder is there, nor the folder's path itself
        (`if output_dir and not os.path.exists(output_dir):`, a path left empty to mean none: lint heldout29b u005,
        a re-identification trainer making its output folder on every rank), each part of an `and` read alone."""
        parts = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
        return [p for p in parts if not cls._exists_test(p) and ast.unparse(p) != ast.unparse(path)]

    @staticmethod
    def _exists_test(test: ast.expr) -> bool:
        """`os.path.exists(d)`, `not os.path.isdir(d)`, `not Path(d).exists()`."""
        while type(test) is ast.UnaryOp and type(test.op) is ast.Not:
            test = test.operand
        return type(test) is ast.Call and type(test.func) is ast.Attribute and test.func.attr in EXISTS_TESTS
