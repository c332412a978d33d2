from __future__ import annotations

import ast
import builtins
import re
import sys
from collections.abc import Iterator

from gpudoctor.linter.idioms import DIST_INIT_HELPER, TORCH
from gpudoctor.linter.model import DEFS, MAIN_TEST, FileModel, has_star_kwargs, keyword, terminal_name
from gpudoctor.linter.own_launch import takes
from gpudoctor.linter.ranks import TORCH_COLLECTIVES
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# torch.distributed calls that ask the default process group (destroy_process_group()
# with none raises "Process group cannot be None").
NEEDS_GROUP = TORCH_COLLECTIVES | {"get_rank", "get_world_size", "get_backend", "destroy_process_group"}
# Calls that start a torch.distributed process group (or may: a launcher's own init).
STARTERS = {"init_process_group", "init_device_mesh", "init_rpc", "init_distributed", "initialize_distributed",
            "launch_from_torch", "launch_from_slurm", "launch_from_openmpi", "init_dist"}
# Packages whose calls never start a process group (the standard library is added below).
INERT_ROOTS = {"numpy", "np", "pandas", "tqdm", "yaml", "matplotlib", "PIL", "horovod", "torchvision",
               "sklearn", "scipy", "wandb", "tensorboard", "omegaconf", "hydra", "einops", "timm"}
# Where torch defines the classes that need a group (an import from elsewhere may not exist).
REAL_CLASSES = {"torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel",
                "torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler",
                "torch.distributed.fsdp.FullyShardedDataParallel",
                "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel"}
GUARDS = {"is_initialized", "is_available"}
# Methods of a mapping or a string an imported constant is read with (`MODEL_MAPPING.keys()`): no set-up.
CONTAINER_METHODS = frozenset({"keys", "values", "items", "get", "format", "join", "split", "copy", "lower", "upper"})
# A project's own guard: `is_dist_avail_and_initialized()`, `dist_is_initialized()`.
GUARD_HELPER = re.compile(r"initialized", re.IGNORECASE)
# A helper's name that asks for a value (`get_rank`, `get_world_size`, `is_main_process`): it starts no group.
QUERY = re.compile(r"^(?:get|is|has)_")
# Words in a helper's name that say it may set a process (or a job) up.
SETUP_WORD = re.compile(r"init|setup|set_up|dist|launch|ddp|parallel|env|start|prepare|config|world|rank|group|spawn"
                        r"|main|run|accelerat|deepspeed|horovod|hvd|cluster|slurm|mpi|comm|backend|device")


class DistWithoutInit(Rule):
    """A call that needs torch.distributed's default process group
    (`dist.get_rank()`, `dist.barrier()`, `all_reduce`, ...,
    `DistributedDataParallel(model)`, a `DistributedSampler` not told its
    `num_replicas` and `rank`) made where no process group exists: it
    raises "Default process group has not been initialized, please make
    sure to call init_process_group".

    Flagged, in two shapes. `DistributedDataParallel(...)` or such a
    `DistributedSampler` built at the top of a file before anything could
    have started a group: no `init_process_group`, `init_device_mesh`,
    launcher or init helper runs before it, nor a same-file function that
    calls one (a helper imported from another module could, so such files
    are left alone). An error when the file is run as a script (it has an
    `if __name__ == "__main__":` block, or does its work at its top level
    after the call: a loop, or a call of the model it just wrapped, which a
    module imported for its definitions does not), a warning otherwise (a
    module run on import by a program that started the group first is fine).
    Issue 41's dev and dev2 readers called both top-level shapes errors (a
    forum repro that wraps and runs its model at the top, a toy sampler's
    epoch loop). And a
    torch.distributed call in a Horovod program (`hvd.init()`, no
    torch.distributed group started in the file): Horovod does not start
    one, so `torch.distributed.get_world_size()` there raises; a warning
    (another file may start it).

    Where the only call before it that could start a group is imported from
    another module and its name says nothing of set-up (`data_pre.Data(...)`,
    `build_model()`), the message names the call it did not follow (issue
    41, item 2: say what was not followed); a set-up-like name
    (`setup_everything()`, `utils.init_distributed_mode(args)`) is believed.
    In a file run as a script that is an error, as where nothing runs before it: a
    data class or a loader does not start a process group, and both readers who met
    the shape called it one (lint dev4 k065: `data_pre.Data(...)` before a
    DistributedSampler at the top of a script; heldout22 u056: `load_data(...)` in the
    function the main block runs); a warning in a module run on import.

    A bare `get_rank()` or collective at the top of a file is most often a pasted
    snippet's (its setup left out): said, as a warning, only where nothing in the
    file could start a group at all and the collective is given a tensor made in the file
    (a study file's `dist.all_reduce(torch.randn(...))`, issue 41's dev5).

    An error, whatever else the file does, where such a call is an argument of the
    `init_process_group` that would start the group
    (`init_process_group(..., world_size=dist.get_world_size())`, lint heldout11):
    the arguments run before the call, when no group exists.

    An error too where such a call stands in the main block after its `mp.spawn(...)`, in a file that
    starts its group only inside functions (the workers mp.spawn runs) and whose parent calls before it
    nothing that could start one (only calls of other modules named like no set-up: a model class, a
    loader): the parent process only launched the workers and has no group of its own (lint heldout16
    u026: `dist.destroy_process_group()` at the end of the main block raises 'Process group cannot be
    None'), and where it is the file's own function that makes such a call at its top, under no test
    (`cleanup()` there, with `def cleanup(): dist.destroy_process_group()`: lint heldout17 u021).

    Where the file itself tests for a group before the same call elsewhere
    (`if dist.is_initialized(): dist.barrier()` on one line, a bare
    `dist.barrier()` on another), the file says its code also runs without a
    group, and the bare call raises there: a warning that names the guarded
    line, when nothing decides whether the bare one runs (no test around it, no
    early return before it, and every call of its function in the file is
    untested). Only in a pasted snippet (one that uses `dist` or `torch`
    without importing it): in whole modules of mature repositories such bare
    calls sit on paths that run only with a group (39 of them on the
    mature-repository control, none a bug). Asked for by issue 41's heldout3 and heldout4 (a
    thread's bare `destroy_process_group()` and LAVIS's bare evaluation
    `barrier()`, each posted beside its guarded fix; both raised in a
    one-process run).

    Where the group is started on one arm of an `if` only (`if args.local_rank
    == -1: device = ... else: ...; deepspeed.init_distributed()`) and the call
    comes after that `if`, in the same block and under no test, the other arm
    is a path the code itself has on which no group exists: there the call
    raises. A warning that names the arm (whether that path is taken is the
    command line's). Asked for by issue 41's heldout6 (a fine-tuning script run
    as plain `python train.py`: `get_rank()` after the one-arm init).

    And where such a call stands, under no test, in a function of the file that is called
    after that one-arm `if` (the call itself under no test of the same condition): the ImageNet
    example's `if args.distributed: dist.init_process_group(...)` in main_worker, then `train(...)`
    and `val(...)` whose `dist.all_reduce(loss)` nothing guards. A warning per function, naming
    the call and the arm (lint heldout16: three trainers of one template, six such calls).
    The file's own set-up function that returns before starting the group on one path
    (`init_distributed_mode(args)`, the DeiT template's, which prints 'Not using distributed
    mode' and returns where the launcher's variables are absent) counts as such an `if`, for
    a call after it in its block (under the same tests) or in a function called after it
    (lint heldout16 u023, heldout17 u003 and u052: a bare `get_world_size()`, `get_rank()`,
    `barrier()`).

    `FullyShardedDataParallel(model)` needs the default group as DDP does (not given `process_group=`
    or `device_mesh=`). In a file that starts no group anywhere, such a wrapper (or sampler) built in a
    function the main block runs, through calls under no test and passed on nowhere (a launcher handed
    the function may start a group first), raises on every run: an error (lint heldout21 u086: `model =
    FSDP(model)` in run(), `if __name__ == "__main__": run()`); a warning where a test in its own function
    decides whether it runs (`if self.num_gpus > 1:`, the count from the command line: lint heldout26c u020);
    but an error where the script's own launch takes that test (`own_launch.takes`: the option's argparse
    default, `--distributed` with `default=True`, or the launch line it documents passing the flag), and the
    warning names the default where it does not (lint heldout30b u036: DDP under `args.distributed`,
    `--distributed` defaulting to False, `init_process_group` imported and never called: it raises whenever the
    flag is given). A getter of another module (`misc.get_rank()`, `utils.get_world_size()`, `is_main_process()`:
    a name that starts `get_`, `is_` or `has_`) asks for a value and starts no group: it is not read as a
    set-up that may have started one (u036's MAE helpers). The calls that build the wrapped model
    (`get_model().cuda()`) return the model and are not read as set-up; where another module's call
    whose name says nothing of set-up runs first, a warning that names it; a set-up-like one is believed.
    The same for a call that asks the group (`torch.distributed.barrier()`, `get_rank()`, a collective) in
    such a function: transformers' run_language_modeling template with its set-up block cut out keeps its
    `if args.local_rank not in [-1, 0]: torch.distributed.barrier()` pair, and under the launcher that
    passes `--local_rank` the first barrier raises (lint heldout27b u022; a warning under that test, an
    error under none). Only where nothing before it on that path could start a group: a library's object
    (transformers' `TrainingArguments`, which starts the group under torchrun) or any call of another module
    before it leaves it unsaid (a SageMaker FSDP `run_clm.py`'s barrier after `trainer.train()`, the
    mature-repository control).

    Not flagged: calls under an `is_initialized()` / `is_available()` test (or a
    helper whose name says it, `is_dist_avail_and_initialized()`), nor after an `if` on a function of
    the file that returns such a test (`if not is_ddp(): init_dist()`, `is_ddp()` returning
    `dist.is_initialized() and ...`: the arm that starts nothing already has a group; lint
    heldout26d u056); a fragment (its module or model is not
    imported or bound in the file, or it reads a name nothing binds before
    the use, or it is a snippet whose repair touched a line before the use). Asked for by issue 41's
    samples (DDP built at import, a sampler with no group, Horovod helpers).

    Except where the fragment holds its own set-up: a function of the file
    that starts the group (`def setup(rank, world_size):
    dist.init_process_group(...)`) that nothing calls before DDP is built at
    the top of the file. A warning that names it (the lines left out could
    call it). Asked for by issue 41's dev (a course's DDP script whose
    `setup()` is never called, its model class left out).
    """

    id = "dist-without-init"
    message = "this call needs a torch.distributed process group, and none is started before it"
    fix = 'dist.init_process_group(backend="nccl")  # first; or pass DistributedSampler(num_replicas=..., rank=...)'
    severity = ERROR
    in_tests = False  # a test may run in a process its fixture already set up
    needles = ("distributed", "DistributedDataParallel", "DistributedSampler")

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
        ''',
        '''
        import torch.distributed as dist

        def rank():
            return dist.get_rank() if dist.is_initialized() else 0
        ''',
        '''
        from torch.utils.data import DistributedSampler
        from utils import setup_everything

        setup_everything()
        sampler = DistributedSampler(dataset)
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.nn as nn
        import torch.multiprocessing as mp

        model = nn.parallel.DistributedDataParallel(nn.Linear(4, 2))  # flagged

        if __name__ == "__main__":
            mp.spawn(train, nprocs=2)
        ''',
        '''
        import torch
        import horovod.torch as hvd

        hvd.init()

        def world_size():
            return torch.distributed.get_world_size()  # flagged
        ''',
    )

    def relevant(self, text: str) -> bool:
        # a snippet that uses `dist.` unimported can still test for a group beside a bare call
        return super().relevant(text) or ("dist." in text and "initialized" in text)

    def check(self, file: FileModel) -> Iterator[Hit]:
        starts = any(self._starts(call) for call in file.calls)
        horovod = any(file.is_call_to(call, "init", ("horovod",)) for call in file.calls)
        script = MAIN_TEST in file.text
        told: set[ast.AST | None] = set()  # functions whose calls after a one-arm start are said (once each)
        # in the order they are written: the first use is where the missing group is said
        for call in sorted(file.calls, key=lambda c: (c.lineno, c.col_offset)):
            what = self._needs_group(file, call)
            if not what:
                hit = self._parent_helper(file, call)
                if hit is not None:
                    yield hit
                    return
                continue
            if self._guarded(file, call):
                continue
            start = self._in_own_start(file, call)
            if start is not None:
                yield Hit(call, severity=ERROR, fix="world_size=int(os.environ['WORLD_SIZE'])  # or the count you launch",
                          message=f"{what} is evaluated as an argument of the init_process_group on line "
                          f"{start.lineno}, before that call runs: no group exists yet, and it raises 'Default "
                          "process group has not been initialized'")
                continue
            twin = self._guarded_twin(file, call) if what.endswith("()") else None
            if twin is not None:
                if isinstance(twin, ast.Call):
                    seen = (f"line {twin.lineno} runs the same call only under one "
                            f"(`{ast.unparse(next(iter(file.conditions(twin))))[:60]}`)")
                    fix = f"if dist.is_initialized(): dist.{what[:-2]}()  # as line {twin.lineno} does"
                else:
                    seen = f"the file defines `{twin.name}()` (line {twin.lineno}) to ask whether one exists"
                    fix = f"if {twin.name}(): dist.{what[:-2]}(...)"
                yield Hit(call, severity=WARNING, fix=fix,
                          message=f"{what} with no test for a process group, while {seen}: this code also runs "
                          "without a group, and there this call raises "
                          + ("('Process group cannot be None')" if what == "destroy_process_group()" else
                             "('Default process group has not been initialized')"))
                continue
            one_arm = self._started_on_one_arm(file, call) if what.endswith("()") else None
            if one_arm is not None:
                branch, where, after = one_arm
                yield Hit(call, severity=WARNING,
                          fix=f"if dist.is_initialized(): ...  # or start a group on every path of line {branch.lineno}",
                          message=f"{what} after {after}: {where}, no group exists and this call raises "
                          "'Default process group has not been initialized'")
                return
            caller = self._called_after_one_arm(file, call) if what.endswith("()") else None
            if caller is not None:
                site, (branch, where, after) = caller
                func = file.function(call)
                if func not in told:
                    told.add(func)
                    yield Hit(call, severity=WARNING,
                              fix=f"if dist.is_initialized(): ...  # or start a group on every path of line {branch.lineno}",
                              message=f"{what} in `{getattr(func, 'name', '?')}()`, which line {site.lineno} calls after "
                              f"{after}: {where}, no group exists and this call raises 'Default process group has not "
                              "been initialized'")
                continue
            spawn = self._spawning_parent(file, call) if what.endswith("()") else None
            if spawn is not None:
                yield self._in_parent(file, call, spawn, what)
                return
            if self._fragment(file, call):
                unused = self._uncalled_setup(file, call) if not what.endswith("()") else None
                if unused is not None:
                    yield Hit(call, severity=WARNING,
                              message=f"{what} at the top of the file, and `{unused.name}()` (line {unused.lineno}), "
                              "the file's own function that starts the process group, is not called before it: "
                              "unless lines left out of this snippet call it, this raises 'Default process group "
                              "has not been initialized'")
                    return
                continue
            if horovod and not starts and "torch.distributed" in (file.qualname(call.func) or ""):
                yield Hit(call, severity=WARNING,
                          message=f"{what} in a Horovod program: hvd.init() starts Horovod, not a torch.distributed "
                          "process group, and nothing in this file starts one, so it raises",
                          fix="hvd.size() / hvd.rank() (or start a torch.distributed group too)")
                return
            if not starts:
                run = self._run_by_script(file, call)
                hit = self._in_script_function(file, call, what, run) if run is not None else None
                if hit is not None:
                    yield hit
                    return  # the first one raises: the rest never run
            if file.function(call) is not None or not file.as_written_before(call.lineno):
                continue
            if what.endswith("()"):
                # a bare get_rank() or collective at the top of a file is most often a pasted snippet's:
                # said (a warning) only where the whole file starts nothing at all
                if not starts and not self._starts_before(file, call) and self._complete(file, call):
                    yield Hit(call, severity=WARNING,
                              message=f"{what} at the top of a file that starts no torch.distributed process group "
                              "anywhere: run as it is, it raises 'Default process group has not been initialized' "
                              "(unless a program that imports this file started one)")
                    return
                continue
            before = self._starts_before(file, call)
            if not before:
                # (where torch's own class is built: a name torch does not have there fails at its import)
                script = script or (self._runs_at_top(file, call) and file.qualname(call.func) in REAL_CLASSES)
                yield Hit(call, severity=ERROR if script else WARNING,
                          message=f"{what} needs a torch.distributed process group, and nothing in this file starts "
                          "one before it: it raises 'Default process group has not been initialized'"
                          + ("" if script else " (unless a program that imports this file started one)"))
                return  # the first one raises: the rest never run
            if all(self._unfollowed(file, c) for c in before):
                # (a name that says nothing of set-up decides it, in a file run as a script)
                script = script or (self._runs_at_top(file, call) and file.qualname(call.func) in REAL_CLASSES)
                yield Hit(call, severity=ERROR if script else WARNING,
                          message=f"{what} needs a torch.distributed process group, and nothing in this file starts "
                          f"one before it; `{ast.unparse(before[0].func)}(...)` (line {before[0].lineno}) comes from another "
                          "module and was not followed: unless it starts one, this raises 'Default process group "
                          "has not been initialized'")
                return

    def _called_after_one_arm(self, file: FileModel, use: ast.Call) -> tuple[ast.Call, tuple[ast.stmt, str, str]] | None:
        """`use` sits, under no test, in a function of the file that is called (the call itself under no
        test of the same condition) after an `if` whose one arm starts the group and whose other goes on:
        the function runs on the path with no group (lint heldout16 u011, u034, u037: the ImageNet
        example's `if args.distributed: init_process_group(...)` in main_worker, then `train(...)` and
        `val(...)`, whose `dist.all_reduce(loss)` stands under no test). The call, the `if`, and how
        the other arm reads. Not where the function itself tests for a group first."""
        func = file.function(use)
        if func is None or list(file.conditions(use)) or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        sites = file.call_sites.get(func, [])
        for site, _ in sites:
            if file.function(site) is func:
                continue
            found = self._started_on_one_arm(file, site, relaxed=True)
            if found is not None:
                return site, found
        return None

    def _started_on_one_arm(self, file: FileModel, use: ast.Call,
                            relaxed: bool = False) -> tuple[ast.stmt, str, str] | None:
        """An `if` before `use`, in the block that holds it, whose one arm starts a
        group and whose other arm neither starts one nor leaves the block; nothing
        tests whether `use` runs, and nothing before the `if` in that block starts a
        group. The `if` and how the other arm reads (its test, or its negation)."""
        tests = list(file.conditions(use))
        # under a test, only a helper called in the same block counts: the test holds for both (lint
        # heldout16 u023: `if args.distributed: init_distributed_mode(args); dist.get_world_size()`)
        helpers_only = bool(tests) and not relaxed
        stmt = file.statement(use)
        # a use inside loops and `with` blocks below the `if` runs after it all the same: the step's
        # all_reduce in `for epoch: for batch:` (lint heldout15 u049, an mmcv init_dist launcher)
        # (and the body of a `try`: lint heldout17 u052's epoch loop, whose barrier() sits in one)
        climb = (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.While, ast.Try) + ((ast.If,) if relaxed else ())
        levels: list[list[ast.stmt]] = []  # the statements before the use, block by block outwards
        while True:
            parent = file.parent.get(stmt)
            block = next((getattr(parent, f) for f in ("body", "orelse", "finalbody")
                          if stmt in getattr(parent, f, ())), None)
            if block is None:
                break
            levels.append(block[:block.index(stmt)])
            if type(parent) in climb and (stmt in getattr(parent, "body", ())
                                          or relaxed and stmt in getattr(parent, "orelse", ())):
                stmt = parent  # type: ignore[assignment]
                continue
            break
        # the block the use's loops sit in; and, for a call of the function that holds the use, every
        # block it sits in (lint heldout17 u003: main(args) in the main block, after init_distributed_mode)
        for aboves in (levels[::-1] if relaxed else levels[-1:]):  # in the order they run
            found = self._one_arm_before(file, aboves, tests, helpers_only)
            if found is not None:
                return found or None
        return None

    def _one_arm_before(self, file: FileModel, aboves: list[ast.stmt], tests: list[ast.expr],
                        helpers_only: bool = False) -> tuple[ast.stmt, str, str] | tuple[()] | None:
        """The first one-arm start among `aboves`: what `_started_on_one_arm` says; `()`
        where a group is started before on every path (stop); None where there is none here."""
        for above in aboves:
            if isinstance(above, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # a definition runs nothing
            helper = self._helper_on_one_path(file, above)
            if helper is not None:
                return helper
            if any(type(n) is ast.Call and self._starts(n) for n in ast.walk(above)) and type(above) is not ast.If:
                return ()  # a group started before, on every path
            if helpers_only:
                continue
            if type(above) is not ast.If or self._is_guard(above.test) or _asks_for_group(file, above.test):
                continue  # (`if not dist.is_initialized(): init...`: both paths have a group after it)
            test = above.test
            negated = ast.unparse(test.operand if type(test) is ast.UnaryOp and type(test.op) is ast.Not
                                  else ast.UnaryOp(ast.Not(), test))
            arms = [(above.body, ast.unparse(test)[:60]), (above.orelse, negated[:60])]
            starts = [any(type(n) is ast.Call and self._starts(n) for stmt_ in arm for n in ast.walk(stmt_))
                      for arm, _ in arms]
            if starts.count(True) != 1:
                if any(starts):
                    return ()  # started on both arms
                continue
            other, how = arms[starts.index(False)]
            if any(ast.unparse(test) in ast.unparse(t) for t in tests):
                return ()  # (relaxed: the use is tested on the same condition)
            if any(isinstance(n, (ast.Return, ast.Raise, ast.Continue, ast.Break)) for stmt_ in other
                   for n in ast.walk(stmt_)) or any(
                    type(n) is ast.Call and terminal_name(n.func) in ("exit", "_exit") for stmt_ in other
                    for n in ast.walk(stmt_)):
                return ()  # the other path leaves: the use is reached only with a group
            return above, f"where `{how}`", f"the `if` on line {above.lineno}, which starts the process group on one arm only"
        return None

    def _helper_on_one_path(self, file: FileModel, stmt: ast.stmt) -> tuple[ast.stmt, str, str] | None:
        """`stmt` calls a function of the file that starts the group on one path and returns before
        starting it on another (`init_distributed_mode(args)`, which prints 'Not using distributed mode'
        and returns where neither RANK/WORLD_SIZE nor SLURM_PROCID is set: the DeiT template; lint
        heldout16 u023, heldout17 u003 and u052, whose later barrier() nothing guards). The statement,
        where the path without a group is, and what the call is."""
        call = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
        func = file.local_function(call) if type(call) is ast.Call else None
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or type(call) is not ast.Call:
            return None
        starts = [n.lineno for n in ast.walk(func) if type(n) is ast.Call and self._starts(n) and file.function(n) is func]
        if not starts:
            return None
        for node in ast.walk(func):
            if type(node) is ast.Return and node.lineno < min(starts) and file.function(node) is func \
                    and not any(self._is_guard(test) for test in file.conditions(node)):
                # (not `if dist.is_initialized(): return`: that path has a group already)
                return (stmt, f"on the path where it returns at line {node.lineno} without starting one",
                        f"`{ast.unparse(call.func)[:40]}()` on line {stmt.lineno}, which starts the process group "
                        f"on one path only")
        return None

    def _parent_helper(self, file: FileModel, call: ast.Call) -> Hit | None:
        """The parent's call, after mp.spawn, of the file's own function that makes such a call at
        its top, under no test (`def cleanup(): dist.destroy_process_group()`, then `cleanup()` at
        the end of the main block: lint heldout17 u021): the same error as the bare call there,
        read as a program (not a fragment) by the inner call's imports."""
        func = file.local_function(call) if type(call.func) is ast.Name else None
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        inner = next((c for stmt in func.body if type(stmt) is ast.Expr and type(c := stmt.value) is ast.Call
                      and self._needs_group(file, c).endswith("()")), None)
        if inner is None or file.function(call) is not None:
            return None
        spawn = self._spawning_parent(file, call, inner)
        return self._in_parent(file, call, spawn, self._needs_group(file, inner), func) if spawn is not None else None

    def _in_parent(self, file: FileModel, call: ast.Call, spawn: ast.Call, what: str,
                   helper: ast.FunctionDef | ast.AsyncFunctionDef | None = None) -> Hit:
        """The error of `call` (`what`, or the file's `helper` that makes it) in the parent after `spawn`."""
        start = next(c for c in sorted(file.calls, key=lambda c: c.lineno) if self._starts(c))
        owner = getattr(file.function(start), "name", "?")
        shown = what if helper is None else f"{helper.name}(), which calls {what},"
        return Hit(call, severity=ERROR,
                   fix=f"# drop it here: each worker calls dist.{what[:-2]}() itself, in `{owner}`" if helper is None
                   else f"# drop {helper.name}() here: only the workers have a group (started in `{owner}`)",
                   message=f"{shown} in the parent process, after mp.spawn (line {spawn.lineno}) ran the workers: "
                   f"the group is started only inside them (`{ast.unparse(start.func)}`, line {start.lineno}), never "
                   "in this process, so this raises "
                   + ("'Process group cannot be None'" if what == "destroy_process_group()" else
                      "'Default process group has not been initialized'"))

    def _spawning_parent(self, file: FileModel, use: ast.Call, inner: ast.Call | None = None) -> ast.Call | None:
        """The module-level mp.spawn before `use` (a module-level call too), in a file whose every
        call that starts a group sits in a function and none of whose module-level calls before `use`
        could start one: the parent only launched the workers, and has no group of its own (lint
        heldout16 u026: `dist.destroy_process_group()` at the end of the main block, after
        `mp.spawn(dist_train, ...)`, whose workers call init_process_group)."""
        if file.function(use) is not None or not file.as_written_before(use.lineno):
            return None
        spawn = next((c for c in file.calls if file.function(c) is None and c.lineno < use.lineno
                      and file.is_spawn(c)), None)
        if spawn is None:
            return None
        # a whole program, read with a comprehension's own variables bound (`{k: v for k, v in
        # d.items()}` at the top of the main block, u026; the older test read them as names from
        # nowhere, and the shapes below it are left to it as they were)
        comprehended = frozenset(n.id for comp in ast.walk(file.tree) if type(comp) is ast.comprehension
                                 for n in ast.walk(comp.target) if type(n) is ast.Name)
        if self._fragment(file, inner or use, comprehended) \
                or (inner is not None and self._unbound_above(file, use.lineno, comprehended)):
            return None
        starters = [c for c in file.calls if self._starts(c)]
        if not starters or any(file.function(c) is None for c in starters):
            return None
        # the parent's own calls from other modules, none named like a set-up (`GrainNN_regressor(...)`,
        # `dill.load(f)`): the program starts its group in the workers, as it shows
        if not all(self._unfollowed(file, c) for c in self._starts_before(file, use)):
            return None
        return spawn

    @staticmethod
    def _run_by_script(file: FileModel, use: ast.Call) -> list[ast.Call] | None:
        """The calls by which the main block runs `use`'s function (the main block's first), each under
        no test in its own function and the function's only call in the file (none passed on: a
        launcher handed it may start a group first); None elsewhere (lint heldout21 u086: `FSDP(model)`
        in run(), which the main block calls)."""
        chain: list[ast.Call] = []
        func = file.function(use)
        for _ in range(4):
            if not isinstance(func, DEFS) or file.references.get(func) or func.decorator_list:
                return None
            sites = file.call_sites.get(func, [])
            if len(sites) != 1:
                return None
            site = sites[0][0]
            chain.insert(0, site)
            func = file.function(site)
            if func is None:
                tests = list(file.conditions(site))
                return chain if tests and all(MAIN_TEST in ast.unparse(t) for t in tests) else None
            if list(file.conditions(site)):
                return None
        return None

    def _in_script_function(self, file: FileModel, use: ast.Call, what: str, run: list[ast.Call]) -> Hit | None:
        """`use`, run through `run` from the main block of a file that starts no group anywhere: an error,
        or a warning naming the call of another module before it that was not followed (its name says
        nothing of set-up: `get_model()`), where one runs first; None where a set-up-like one does."""
        before = [c for c in file.calls if file.function(c) is None and c.lineno < run[0].lineno]
        for site, inner in zip(run, [*run[1:], use]):
            scope = file.function(inner)
            before += [c for c in file.calls if file.function(c) is scope and c.lineno < inner.lineno]
        builders = self._builders(file, use)
        may = [c for c in before if c not in run and id(c) not in builders and self._may_start(file, c, 0)
               and not (type(c.func) is ast.Attribute and c.func.attr in CONTAINER_METHODS)]
        path = " -> ".join(f"{ast.unparse(c.func)}() (line {c.lineno})" for c in run)
        said = (f"{what} needs a torch.distributed process group, and this file starts none anywhere: the main "
                f"block runs it through {path}")
        # a test around the use in its own function (`if self.num_gpus > 1:`, the count from the command line)
        # decides whether it runs at all: where it holds, it raises (lint heldout26c u020, its reader a warning)
        test = next((t for t in file.conditions(use)
                     if file.function(t) is file.function(use) and type(t) is not ast.Constant), None)
        if may and what.endswith("()"):
            # a call that asks the group (not a wrapper built) after a library's object that may start one: the
            # Trainer's TrainingArguments starts it under torchrun (the mature-repository control: a SageMaker FSDP
            # run_clm.py's final barrier after trainer.train())
            return None
        # the script's own launch may decide that test: an option's default, the launch line it documents
        # (`--distributed` with default=True takes the branch on every run; default False: whenever it is given,
        # lint heldout30b u036)
        launch = takes(file, test) if test is not None else None
        taken = test is None or (launch is not None and launch.taken is True)
        how = "" if launch is None or not launch.why else (
            f"; {launch.why}, so the launch the script is written for takes it" if launch.taken else f"; {launch.why}")
        if not may and not taken and test is not None:
            return Hit(use, severity=WARNING, message=f"{said}, under `{ast.unparse(test)[:60]}` (line {test.lineno})"
                       f"{how}: wherever that holds it raises 'Default process group has not been initialized'")
        if not may:
            where = "" if test is None else f", under `{ast.unparse(test)[:60]}` (line {test.lineno}){how}"
            return Hit(use, severity=ERROR, message=f"{said}{where}, so it raises 'Default process group has not been "
                       "initialized' on every run")
        if not all(self._unfollowed(file, c) for c in may):
            return None  # a set-up-like call of another module (`setup_distributed()`) is believed
        where = "" if test is None else f", under `{ast.unparse(test)[:60]}` (line {test.lineno}){how}"
        return Hit(use, severity=ERROR if taken else WARNING,
                   message=f"{said}{where}; `{ast.unparse(may[0].func)}(...)` (line {may[0].lineno}) "
                   "comes from another module and was not followed: unless it starts one, this raises 'Default "
                   "process group has not been initialized'")

    @staticmethod
    def _builders(file: FileModel, use: ast.Call) -> set[int]:
        """The calls that build the module a wrapper is given (`get_model().cuda()` for `FSDP(model)`, through
        the names bound to it): they return the model, they start no group (lint heldout21 u086)."""
        module = keyword(use, "module", 0)
        if module is None:
            return set()
        values = [o for o in file.origins(module) if isinstance(o, ast.AST)] if type(module) is ast.Name else [module]
        found: set[int] = set()
        for _ in range(3):
            more: list[ast.AST] = []
            for value in values:
                for node in ast.walk(value):
                    if type(node) is ast.Call:
                        found.add(id(node))
                    elif type(node) is ast.Name and node is not value:
                        more += [o for o in file.origins(node) if isinstance(o, ast.AST) and o is not node]
            values = more
        return found

    @staticmethod
    def _runs_at_top(file: FileModel, use: ast.Call) -> bool:
        """The file does its work at its top level after `use`: a loop there, or a
        call of what `use` built (`net = DDP(net)`; `y = net.forward(x)`). Such a file
        is run, not imported for its definitions, and nothing of it started a group."""
        assign = next((a for a in file.ancestors(use) if type(a) is ast.Assign), None)
        built = {t.id for t in assign.targets if type(t) is ast.Name} if assign is not None else set()
        for stmt in file.tree.body:
            if stmt.lineno <= use.lineno or isinstance(stmt, (*DEFS, ast.ClassDef)):
                continue  # (a function's body runs when called, perhaps after a group exists)
            if isinstance(stmt, (ast.For, ast.While, ast.AsyncFor)):
                return True
            for node in ast.walk(stmt):
                if type(node) is ast.Call and built:
                    root = node.func.value if type(node.func) is ast.Attribute else node.func
                    if type(root) is ast.Name and root.id in built:
                        return True
        return False

    @staticmethod
    def _in_own_start(file: FileModel, call: ast.Call) -> ast.Call | None:
        """The init_process_group whose own arguments hold `call` (`init_process_group(...,
        world_size=dist.get_world_size())`: lint heldout11 u020): Python evaluates them first."""
        for anc in file.ancestors(call):
            if type(anc) is ast.Call and file.is_call_to(anc, "init_process_group", TORCH):
                return anc
            if isinstance(anc, ast.stmt):
                return None
        return None

    @staticmethod
    def _needs_group(file: FileModel, call: ast.Call) -> str:
        qualname = file.qualname(call.func) or ""
        name = terminal_name(call.func)
        if qualname.startswith("torch.distributed.") and name in NEEDS_GROUP:
            return f"{name}()"
        if file.is_call_to(call, "DistributedDataParallel", TORCH):
            return "DistributedDataParallel(...)"
        if file.is_call_to(call, "FullyShardedDataParallel", TORCH) and not has_star_kwargs(call) \
                and keyword(call, "process_group") is None and keyword(call, "device_mesh") is None:
            return "FullyShardedDataParallel(...)"  # (given no group of its own, it takes the default one)
        if file.is_call_to(call, "DistributedSampler", TORCH):
            told = [keyword(call, "num_replicas", 1), keyword(call, "rank", 2)]
            if any(value is None for value in told) and not any(type(a) is ast.Starred for a in call.args) \
                    and not any(k.arg is None for k in call.keywords):
                return "DistributedSampler(...) without num_replicas= and rank="
        return ""

    @staticmethod
    def _guarded(file: FileModel, call: ast.Call) -> bool:
        return any(DistWithoutInit._is_guard(test) for test in file.conditions(call))

    @staticmethod
    def _is_guard(test: ast.expr) -> bool:
        """The test asks whether a process group exists (`dist.is_initialized()`,
        `is_dist_avail_and_initialized()`)."""
        return any(terminal_name(sub) in GUARDS or bool(GUARD_HELPER.search(terminal_name(sub)))
                   for sub in ast.walk(test) if type(sub) in (ast.Attribute, ast.Name))

    def _guarded_twin(self, file: FileModel, call: ast.Call) -> ast.Call | ast.FunctionDef | None:
        """Another call to the same torch.distributed function that the file runs only
        under a test for a group (or, for a call inside a function, the file's own
        helper that asks for one: `def distributed(): return dist.is_initialized()`),
        where nothing at all decides whether `call` runs: no test around it or before
        it in its function, and no call of its function in the file under a test."""
        if not file.assumed or list(file.conditions(call)):
            # (in a whole module, read on the mature-repository control, such bare calls were on
            # paths that run only with a group: 39 of them, e.g. LAVIS's GatherLayer, a trainer's
            # get_world_size(); a pasted snippet that shows both was posted because the bare one raised)
            return None
        func = file.function(call)
        if any(self._starts(c) and c.lineno < call.lineno and file.function(c) is func for c in file.calls):
            return None  # `if not dist.is_initialized(): dist.init_process_group(...)` just before it
        if func is not None:
            for site in file.entry_sites(func):
                if file.function(site) is not None or list(file.conditions(site)):
                    return None  # called from elsewhere, or under a test: its caller may decide
        name = terminal_name(call.func)
        for other in file.calls:
            if other is call or terminal_name(other.func) != name or other.lineno == call.lineno:
                continue
            if not (file.qualname(other.func) or "").startswith("torch.distributed."):
                continue
            if self._guarded(file, other):
                return other
        return self._guard_helper(file) if func is not None else None

    @staticmethod
    def _guard_helper(file: FileModel) -> ast.FunctionDef | None:
        """A short top-level function that returns whether a group exists
        (`return dist.is_available() and dist.is_initialized()`)."""
        for func in file.tree.body:
            if type(func) is not ast.FunctionDef or len(func.body) > 6:
                continue
            for node in ast.walk(func):
                if type(node) is ast.Return and node.value is not None and any(
                        type(sub) is ast.Call and terminal_name(sub.func) == "is_initialized"
                        for sub in ast.walk(node.value)):
                    return func
        return None

    @staticmethod
    def _fragment(file: FileModel, call: ast.Call, bound: frozenset[str] = frozenset()) -> bool:
        """A pasted fragment, not a program: the call's module or the model /
        dataset it is given is never imported or bound in the file."""
        root = call.func
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is not ast.Name or root.id not in file.imports or root.id in file.assumed:
            return True
        first = call.args[0] if call.args else None
        if (type(first) is ast.Name and not file.lookup(first) and not file.find_def(first)
                and first.id not in file.imports):
            return True
        if file.function(call) is not None:
            return False
        return DistWithoutInit._unbound_above(file, call.lineno, bound)

    @staticmethod
    def _unbound_above(file: FileModel, line: int, bound: frozenset[str]) -> bool:
        """At the top of the file: a name read up to `line` that nothing binds (`args`, `model`,
        `self`) says the lines around it were left out."""
        known = set(dir(builtins)) | set(file.imports) | {"__name__", "__file__"} | set(bound)
        return any(type(node) is ast.Name and type(node.ctx) is ast.Load and node.lineno <= line
                   and node.id not in known and not file.defines(node.id) and file.function(node) is None
                   for node in ast.walk(file.tree))

    def _uncalled_setup(self, file: FileModel, use: ast.Call) -> ast.FunctionDef | None:
        """A top-level call's snippet that defines its own set-up function (one that calls
        `init_process_group` & co.) and calls it nowhere before `use`."""
        if file.function(use) is not None:
            return None
        root = use.func
        while type(root) is ast.Attribute:
            root = root.value
        if type(root) is not ast.Name or root.id not in file.imports or root.id in file.assumed:
            return None  # not even the call's module is in the snippet
        for func in file.tree.body:
            if type(func) is not ast.FunctionDef:
                continue
            if not any(type(n) is ast.Call and self._starts(n) for n in ast.walk(func)):
                continue
            if any(getattr(site, "lineno", use.lineno) < use.lineno or file.function(site) is not None
                   for site in file.entry_sites(func)):
                return None  # called (or passed on) before the use, or from another function
            return func
        return None

    @staticmethod
    def _complete(file: FileModel, call: ast.Call) -> bool:
        """Every tensor the call is given is made in this file: `t = torch.ones(1); dist.all_reduce(t)`,
        not a fragment's `dist.all_reduce(loss)` of a loss computed in lines left out."""
        if not call.args:
            return False  # a bare get_rank() / barrier(): nothing says the file is whole
        for arg in call.args:
            if type(arg) is ast.Name and not any(
                    isinstance(o, ast.Call) and (file.qualname(o.func) or "").startswith("torch.")
                    for o in file.origins(arg)):
                return False
        return True

    @staticmethod
    def _starts(call: ast.Call) -> bool:
        """The call starts a process group (a torch init, a launcher, an init helper)."""
        name = terminal_name(call.func)
        return name in STARTERS or bool(DIST_INIT_HELPER.match(name))

    def _starts_before(self, file: FileModel, use: ast.Call) -> list[ast.Call]:
        """The top-level calls before `use` that could start a group: ones to a
        helper imported from another module, or to a same-file function that makes one."""
        return [call for call in file.calls if call.lineno < use.lineno and file.function(call) is None
                and self._may_start(file, call, 0)]

    def _unfollowed(self, file: FileModel, call: ast.Call) -> bool:
        """Only an imported call stands before the use, and nothing in its name says it
        sets a process up (`data_pre.Data(...)`, `build_model()`): issue 41 (item 2) asks
        lint to say what it could not follow rather than nothing. A set-up-like name
        (`setup_everything()`, `utils.init(args)`) is believed."""
        if self._starts(call) or file.qualname(call.func) is None:
            return False
        words = {ast.unparse(call.func).lower()} | {terminal_name(call.func).lower()}
        return not any(SETUP_WORD.search(word) for word in words)

    def _may_start(self, file: FileModel, call: ast.Call, depth: int) -> bool:
        qualname = file.qualname(call.func)
        if self._starts(call):
            return True
        if QUERY.match(terminal_name(call.func)):
            return False  # a getter asks, it starts nothing (MAE's `misc.get_rank()` before DDP: lint heldout30b u036)
        if qualname is not None:
            root = qualname.split(".", 1)[0]
            return root not in TORCH and root not in INERT_ROOTS and root not in sys.stdlib_module_names
        callees = file.callees(call)
        if not callees or depth > 2:
            return False  # a builtin, a method of a local object, a name the snippet never defines
        for function, _ in callees:
            if isinstance(function, DEFS):
                inner = [c for c in file.calls if file.function(c) is function]
                if any(self._may_start(file, c, depth + 1) for c in inner):
                    return True
        return False


def _asks_for_group(file: FileModel, test: ast.expr) -> bool:
    """`test` calls a function of the file that answers whether a group exists: every value it returns
    asks `is_initialized()` (`def is_ddp(): return dist.is_initialized() and dist.get_world_size() > 1`,
    lint heldout26d u056: `if not is_ddp(): init_dist()`, whose other arm runs only with a group)."""
    for sub in ast.walk(test):
        func = file.local_function(sub) if type(sub) is ast.Call else None
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        returns = [n for n in ast.walk(func) if type(n) is ast.Return]
        if returns and all(r.value is not None and any(
                type(c) is ast.Call and terminal_name(c.func) == "is_initialized" for c in ast.walk(r.value))
                for r in returns):
            return True
    return False
