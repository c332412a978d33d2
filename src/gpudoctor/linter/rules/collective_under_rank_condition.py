from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import replace

from gpudoctor.linter.arms import fixed_truth
from gpudoctor.linter.idioms import source, wrapper_kind
from gpudoctor.linter.model import FileModel, terminal_name
from gpudoctor.linter.project import LIBRARIES, Query
from gpudoctor.linter.ranks import (ALL_COLLECTIVES, FSDP_GATHERS, Branch, collective_name, collective_reach, makes_collective,
                                  depends_on, is_rank_condition, over_own_group, rank_branch, same_everywhere)
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule



# A test on the rank somewhere in the text (a cheap look before the tree):
# "rank" next to a comparison (`rank == 0`, `0 == rank`, `get_rank() != 0`,
# `os.environ["RANK"] == "0"`) or on an `if` line (`if is_rank_zero:`), or a
# main-process flag on an `if` line (`if master_process:`).
RANK_AT = re.compile(r"rank|RANK")
AFTER_RANK = re.compile(r"\w*(?:\(\))?['\"]?\]?\)*[ \t]*(?:[=!]=|>|<|%|in\b|not[ \t]+in\b)")
BEFORE_RANK = re.compile(r"(?:[=!]=|<|>)[ \t]*[\w.]*$")
IF_LINE = re.compile(r"[ \t]*(?:el)?if\b")
# Every collective's name as called (`all_gather_object(` has no `gather(` in it).
CALLED = tuple(n + "(" for n in sorted(ALL_COLLECTIVES - {"log"}))
# The same names grouped under a word each contains: a file without the word
# skips its group (one scan of the text instead of one per name, for most files).
STEMS = ("barrier", "reduce", "broadcast", "gather", "scatter", "all_to_all", "new_", "wait_for_everyone",
         "pad_across_processes", "rendezvous")
CALLED_BY_STEM = tuple((stem, tuple(n for n in CALLED if stem in n)) for stem in STEMS)
# An argument that names a process group: `group`, `process_group`, `tp_pg`, `dp_group`.
GROUP_NAME = re.compile(r"group|(?:^|_)pg$", re.IGNORECASE)
# What a file must hold to make one of the libraries' collective methods (ranks.LIBRARY_METHOD_COLLECTIVES).
LIBRARY_NEEDLES = ("save_checkpoint(", "full_optim_state_dict(", "clip_grad_norm_(", "distributed.checkpoint", "save_model(",
                   "evaluate(", "predict(")
# What each library's docs say of its collective methods (ranks.LIBRARY_METHOD_COLLECTIVES), for the message.
LIBRARY_WHY = {
    "save_checkpoint": "DeepSpeed: every process must call it, each saves its own states and waits for the others",
    "save_model": "transformers' Trainer under FSDP or ZeRO-3: it gathers the full state dict from every rank",
    "evaluate": "transformers' Trainer: its evaluation loop gathers the losses and predictions of every process",
    "predict": "transformers' Trainer: its prediction loop gathers the predictions of every process",
    "full_optim_state_dict": "FSDP: called on all ranks, it gathers the optimizer state",
    "clip_grad_norm_": "FSDP: called on all ranks, it reduces the gradient norms",
    "save": "torch.distributed.checkpoint: it coordinates the writes of every rank",
    "load": "torch.distributed.checkpoint: it coordinates the reads of every rank",
    "save_state_dict": "torch.distributed.checkpoint: it coordinates the writes of every rank",
    "load_state_dict": "torch.distributed.checkpoint: it coordinates the reads of every rank",
}
FLAG_WORDS = ("main_process", "is_main", "master", "global_zero", "is_chief", "is_primary", "is_leader",
              "process_zero", "process_index")


class CollectiveUnderRankCondition(Rule):
    """A collective (`barrier`, `all_reduce`, `broadcast`, `all_gather`, ...)
    that only some ranks reach: every rank of the group must make the same
    collectives in the same order, so the ranks that do call it wait for the
    others until the backend timeout (30 minutes on gloo, 10 on NCCL) and the
    job hangs, or later collectives pair up wrongly.

    Flagged: a collective under a test on the rank (`if rank == 0:`,
    `if dist.get_rank() == 0`, `if args.local_rank in [-1, 0]`,
    `if is_main_process():`, `if master_process:`, `if self.global_rank == 0`,
    `if accelerator.is_main_process`, `if trainer.is_global_zero`), after an
    early `return` / `continue` under such a test, or reached through a
    function of the project called in the branch. Collectives are
    torch.distributed's (and `new_group`), accelerate's `wait_for_everyone` /
    `gather` / `reduce`, Lightning's `strategy.barrier` / `self.all_gather` /
    `self.log(sync_dist=True)`, torch_xla's `rendezvous`, ignite's
    `idist.all_gather` / `all_reduce` / `broadcast` / `barrier`. A test on a
    value that only some ranks hold counts as a rank test: `if self.evaluator:`
    where the attribute is built only under `if rank == 0:` (None elsewhere).
    After an early exit (`if rank == 1: raise`), the message names the exit
    and the fix shares the decision (or moves the call above the exit):
    moving the call out of a branch it is not in would change nothing.

    Not flagged: tests every rank answers alike (`if dist.is_initialized()`,
    `if world_size > 1`, `if args.local_rank != -1`); `dist.broadcast(t,
    src=0)` called by every rank; a collective in both arms of an `if`; the
    "rank 0 first" pairing where the other ranks make the same collective
    under the opposite test (`if local_rank not in [-1, 0]: barrier()` ...
    `if local_rank == 0: barrier()`); a collective over a group of its own
    (`group=pg`: the ranks in the branch may be that group); a test one of
    whose alternatives cannot be resolved (`if rank == 0 or full_copy:`); a
    function whose collective sits under a test of its own (it may not run
    where it is called). The message shows the chain followed: the test, and
    the function and line that communicate. A collective reached through an
    attribute built from a class of the file (`self.meter = Meter()`, then
    `self.meter.sync()`) is followed too.

    An FSDP model's `state_dict()` is a collective too (its full state dict, the default, all-gathers
    the shards from every rank, also with `FullStateDictConfig(rank0_only=True)`): taken under
    `if is_main():` to save a checkpoint, it hangs (lint heldout15 u020, u030), where the model is
    `FSDP(...)` on every path a multi-process run takes and the file picks no sharded or local
    state-dict type. The same test written twice around the same call in one function (each stage's
    save and the final one) is one mistake, said once, and no turn-taking: "rank 0 first" pairs
    opposite tests only. So is a library's collective below (DeepSpeed's `save_checkpoint`) written
    again under the same test in one function (the last and the best checkpoint, each under its own
    `if rank == 0:`: lint heldout26 u006).

    Library methods that communicate inside, as their docs say every rank must call them: DeepSpeed's
    `engine.save_checkpoint` on an engine from `deepspeed.initialize(...)` ("all processes must call
    this method ... This method will hang": lint heldout16 u019, saved on `local_rank == 0` alone), FSDP's
    `FullyShardedDataParallel.full_optim_state_dict` and an FSDP model's `clip_grad_norm_`,
    torch.distributed.checkpoint's `save` / `load`, and the `save_model` of a transformers (or trl)
    Trainer in a file that shards it (`fsdp="full_shard auto_wrap"`, DeepSpeed stage 3): it gathers
    the full state dict from every rank (lint heldout21 u094, heldout22 u008: saved on local rank 0);
    and that Trainer's `evaluate()` / `predict()` on any run of several processes: their loops gather
    every process's losses and predictions (lint heldout26b u019: `trainer.evaluate()` under `if rank == 0:`). An early exit in the `else:` of a rank test (`if
    is_main_process(): ... else: continue`) sends the other ranks away as one in its body does. Two
    tests that share a rank part (`step % n == 0 and local_rank == 0`, then `local_rank == 0` for the
    final save) pass the same ranks: not the "rank 0 first" turn-taking, each is said.

    A warning, naming it, where the rank test comes with another that the file does not decide (`if
    dry_run and rank == 0: return` before a barrier: it hangs only when --dry-run is passed, lint
    heldout16 u049; `if rank != 0 and args.eval and ...:`, u060), or nests one inside its branch (`if
    local_rank == 0:` ... `if self.val_dataloader:` ... `self.validate()`: lint heldout25c u024, whose
    only trainer is built with no validation set; heldout24 u047's reader a warning). A part every rank of a job passes
    alike, a constant of the file, or a step counter the loop advances (`global_step % save_every == 0`:
    the loop brings that step) keeps it an error. A warning too where the path to the split passes,
    around it or as an early exit above it, a test of an option read with a default that is off (`if
    not ckpt_cfg.get("enable", False): return`, lint heldout22 u003): a job started with its defaults
    never gets there. Not a test of the file system (`if not Path("tokenizer_vocab.txt").exists():`):
    a first run on a fresh machine takes it (lint heldout15 u012, u020). Each diagnostic names the
    rank test's line among its lines (`also`): the split shows at the test and at the collective
    (lint heldout21 u103's reader wrote it at the test).

    DDP's backward is a collective too: its hooks all-reduce the gradient buckets, so the backward of
    a DDP model's output under a rank test (`output = model(x)` on every rank, then `if rank == 0:
    output.sum().backward()`: lint heldout26d u047) hangs the ranks that make it (not in a file that uses
    `no_sync()`, nor where the forward is under the test too: ddp-forward-on-one-rank).

    A warning: a `break` under a rank test in a loop whose every iteration
    makes a collective (`if rank == 0 and val_loss > best: break` after
    `dist.all_reduce(loss)`): the ranks that stop leave the others waiting in
    that collective, unless it was the last iteration anyway. Decide on one
    rank, then `dist.broadcast` the decision and break on every rank. An
    error where the loop is `while True:` and that `break` (or `return`) is
    its only way out: there is no last iteration, so the other ranks certainly
    loop on into a collective the stopped ranks no longer make (issue 41,
    point 3).
    """

    id = "collective-under-rank-condition"
    severity = ERROR  # a certain crash or hang
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "collective reached only on some ranks: the others never call it and the job hangs"
    fix = "dist.barrier()  # moved out of the `if rank == 0:` block: every rank calls it"
    needles = ("barrier", "all_reduce", "broadcast", "gather", "reduce", "scatter", "all_to_all",
               "wait_for_everyone", "new_group", "rendezvous", "sync_dist", *LIBRARY_NEEDLES)

    VALID = (
        '''
        import torch
        import torch.distributed as dist

        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "ckpt.pt")
        dist.barrier()  # every rank waits for the checkpoint
        ''',
        '''
        import torch.distributed as dist

        if dist.is_initialized() and dist.get_world_size() > 1:
            dist.all_reduce(loss)
        if rank == 0:
            print(f"loss {loss.item():.3f}")
        ''',
        '''
        import torch.distributed as dist

        def load_dataset(args):
            if args.local_rank not in [-1, 0]:
                dist.barrier()  # the other ranks wait while rank 0 downloads
            dataset = download(args.data)
            if args.local_rank == 0:
                dist.barrier()  # rank 0 releases them
            return dataset
        ''',
        '''
        import torch.distributed as dist

        if rank == 0:
            dist.broadcast(params, src=0)
        else:
            dist.broadcast(params, src=0)
        ''',
        '''
        import torch.distributed as dist

        if args.local_rank != -1:
            dist.init_process_group("nccl")
            dist.barrier()
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        if dist.get_rank() == 0:
            torch.save(model.module.state_dict(), "ckpt.pt")
            dist.barrier()  # flagged
        ''',
        '''
        import torch.distributed as dist

        def log_metrics(metrics, rank):
            if rank != 0:
                return
            gathered = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, metrics)  # flagged
            print(gathered)
        ''',
        '''
        import torch.distributed as dist

        def reduce_loss(loss):
            dist.all_reduce(loss)
            return loss / dist.get_world_size()

        for step, batch in enumerate(loader):
            loss = train_step(batch)
            if master_process:
                print(step, reduce_loss(loss).item())  # flagged
        ''',
        '''
        from accelerate import Accelerator

        accelerator = Accelerator()
        if accelerator.is_main_process:
            accelerator.wait_for_everyone()  # flagged
            accelerator.save_model(model, "out")
        ''',
    )

    def relevant(self, text: str) -> bool:
        # A rank test, and something that may communicate: a collective here,
        # or a call into another module of the project (asked of it later).
        # A spawned worker's first parameter is its rank whatever its name (`gpu`).
        if "spawn(" in text or "start_processes(" in text:
            return True
        if "rank" in text or "RANK" in text:
            for m in RANK_AT.finditer(text):
                start = m.start()
                if (AFTER_RANK.match(text, m.end()) or BEFORE_RANK.search(text[max(0, start - 40):start])
                        or IF_LINE.match(text, text.rfind("\n", 0, start) + 1)):
                    return True
        for word in FLAG_WORDS:
            at = text.find(word)
            while at >= 0:
                if IF_LINE.match(text, text.rfind("\n", 0, at) + 1):
                    return True
                at = text.find(word, at + 1)
        return False

    def deferred(self, text: str) -> bool:
        # No collective written here: only a call into the project can make
        # one, and only where a rank word shows a test may split the ranks.
        if _writes_collective(text) or "sync_dist" in text or ("FullyShardedDataParallel" in text and "state_dict(" in text) \
                or any(n in text for n in LIBRARY_NEEDLES) or ("backward(" in text and "DistributedDataParallel" in text):
            return False  # (an FSDP model's state dict gathers: FSDP_GATHERS; DDP's backward all-reduces)
        return "rank" in text or "RANK" in text or "spawn(" in text or any(w in text for w in FLAG_WORDS)

    def check(self, file: FileModel) -> Iterator[Hit]:
        # one diagnostic per condition block: `if local_rank == 0: a = reduce(x); b = reduce(y)` is
        # one mistake (the block runs on one rank), said once with its other lines (lint heldout15
        # u056 gave two errors for one `if`); another condition, or the other arm, keeps its own
        groups: dict[tuple[int, ...], list[Hit]] = {}
        for key, hit in self._hits(file):
            if key is None:
                yield hit
            else:
                groups.setdefault(key, []).append(hit)
        for hits in groups.values():
            first, *rest = sorted(hits, key=lambda h: (getattr(h.node, "lineno", 0), getattr(h.node, "col_offset", 0)))
            if rest:
                lines = ", ".join(str(getattr(h.node, "lineno", "?")) for h in rest)
                word = "lines" if len(rest) > 1 else "line"
                first = replace(first, message=f"{first.message} (the same condition at {word} {lines})")
            yield first

    def _hits(self, file: FileModel) -> Iterator[tuple[tuple[int, ...] | None, Hit]]:
        """Each call that makes a collective on some ranks only, keyed by the condition block
        (the test, the arm, the early exit) that splits the ranks; None for a hit that still
        waits on another file (its query)."""
        for backward, split, build in _ddp_backwards(file):
            yield (id(split.test),), Hit(backward, also=(split.test.lineno,), message=(
                f"the backward of the DDP model's output (wrapped at line {build.lineno}) runs only on some ranks "
                f"(it depends on {depends_on(file, split)}): DDP's backward all-reduces the gradients, so these "
                "ranks wait in it for the others, which never call it, and the job hangs"),
                fix="run the forward and backward on every rank (or, for a check on one rank, the bare "
                "model: model.module(x).sum().backward())")
        reach = collective_reach(file)
        found: list[tuple[ast.Call, str, Branch]] = []
        for call in file.calls:
            name = collective_name(file, call)
            if name and not over_own_group(call, name) and not self._expected_to_fail(file, call):
                branch = rank_branch(file, call)
                if branch is not None:
                    found.append((call, name, branch))
        for call, name, branch in found:
            if makes_collective(file, branch.other, reach) or self._paired(file, call, name, branch, found):
                continue
            if branch.exit is not None:
                message = (f"{name}() is reached only by the ranks that do not {_word(branch.exit)} at line "
                           f"{branch.exit.lineno} (it depends on {depends_on(file, branch)}): the ranks that left "
                           "never call it and the others wait in it: the job hangs")
            else:
                message = (f"{name}() runs only on some ranks (it depends on {depends_on(file, branch)}): "
                           + _others_do(file, branch, name, "never call it"))
            why = LIBRARY_WHY.get(terminal_name(call.func)) if not name.startswith("dist.") else None
            if why is not None:
                message = message.replace(f"{name}() ", f"{name}() ({why}) ", 1)
            if terminal_name(call.func) in FSDP_GATHERS:
                # (lint heldout15 u020, u030: a checkpoint of an FSDP model taken under `if is_main():`)
                message = message.replace(f"{name}() ", f"{name}() of an FSDP model (its full state dict "
                                          "all-gathers the shards from every rank) ", 1)
                fix = (f"state = {name}()  # on every rank (FullStateDictConfig(rank0_only=True) keeps the result "
                       "on rank 0); only the torch.save under the rank test")
                yield _same_call(file, call, branch), undecided(
                    file, branch, Hit(call, message=message, fix=fix, also=(branch.test.lineno,)), parts=False)
                continue
            # a library's collective (DeepSpeed's save_checkpoint) written again under the same test in the
            # same function (the last and the best checkpoint, lint heldout26 u006): one mistake, said once
            key = _same_call(file, call, branch) if why is not None else _block(branch)
            yield key, undecided(file, branch, Hit(call, message=message, fix=self._fix(file, call, branch),
                                                   also=(branch.test.lineno,)))
        imported = set(file.imports) | set(file.relative_imports)
        # Names a call must have to reach a collective of this file: its
        # functions and methods that make one, and its classes (their `__init__`).
        names = {getattr(f, "name", "") for f in reach} | set(file.classes) if reach else set()
        for call in file.calls:
            reached = self._reached_through(file, call, reach) if terminal_name(call.func) in names else None
            if reached is None and not (
                self._root_name(call.func) in imported and self._maybe_project_function(file, call)
            ):
                continue
            if over_own_group(call, "") or any(
                    GROUP_NAME.search(terminal_name(a)) for a in list(call.args) + [k.value for k in call.keywords]
                    if type(a) in (ast.Name, ast.Attribute)):
                continue  # `check(p, group)`: the function communicates over the group it is given
            branch = rank_branch(file, call)
            if branch is None or makes_collective(file, branch.other, reach):
                continue
            callee = terminal_name(call.func)
            # "rank 0 first": `if not is_main: wait()` ... `if is_main: wait()` in one function
            if any(terminal_name(c.func) == callee and b.test is not branch.test and file.function(c) is file.function(call)
                   for c, b in self._calls_under_rank_tests(file, callee)):
                continue
            if reached is not None:
                target, collective = reached
                what = f"{collective}() at line {target.lineno}"
                yield _block(branch), undecided(file, branch, Hit(call, message=self._through(file, callee, what, branch),
                                                                  fix=self._fix(file, call, branch),
                                                                  also=(branch.test.lineno,)))
            else:
                yield None, undecided(file, branch, Hit(
                    call,
                    message=self._through(file, callee, "{reached}", branch),
                    fix=self._fix(file, call, branch),
                    query=Query("reaches-collective", self._import_name(file, call)),
                ))
        if "break" in file.text or "return" in file.text:
            yield from ((None, hit) for hit in self._stops(file, reach))

    def _stops(self, file: FileModel, reach: dict) -> Iterator[Hit]:
        """`break` under a rank test in a loop that communicates every iteration."""
        for brk in (n for n in ast.walk(file.tree) if type(n) in (ast.Break, ast.Return)):
            loop = next(file.enclosing_loops(brk), None)
            if loop is not None and file.function(loop) is not file.function(brk):
                continue
            branch = rank_branch(file, brk) if loop is not None else None
            if loop is None or branch is None or not any(a is loop for a in file.ancestors(branch.test)):
                continue
            if any(type(n) in (ast.Break, ast.Return) for node in branch.other for n in ast.walk(node)):
                continue  # the other ranks stop too
            found = self._every_iteration(file, loop, reach)
            if found is None:
                continue
            collective, name = found
            word = "break" if type(brk) is ast.Break else "return"
            fix = "stop = torch.tensor(int(should_stop)); dist.broadcast(stop, src=0)  # then `if stop: break` on every rank"
            if self._only_way_out(file, loop, brk):
                yield Hit(
                    brk,
                    message=f"{word} under a rank test ({depends_on(file, branch)}) is the only way out of this "
                    f"`while True` loop: the other ranks never leave it, and wait in {name}() at line "
                    f"{collective.lineno} for ranks that have stopped making it: the job hangs",
                    fix=fix, severity=ERROR)
                continue
            yield Hit(
                brk,
                message=f"{word} under a rank test ({depends_on(file, branch)}) takes only some ranks out of the "
                f"loop; the others go on to {name}() at line {collective.lineno} and, unless this was the last "
                "iteration, wait there: the job hangs",
                fix=fix,
                severity=WARNING,
            )

    @staticmethod
    def _only_way_out(file: FileModel, loop: ast.AST, stop: ast.AST) -> bool:
        """`while True:` whose one exit is `stop`: the ranks that skip it loop on, with no
        last iteration to end them (no other `break`, `return`, `raise` or exit call in it)."""
        if type(loop) is not ast.While or type(loop.test) is not ast.Constant or loop.test.value not in (True, 1):
            return False
        for node in loop.body:
            for sub in ast.walk(node):
                if sub is stop:
                    continue
                if type(sub) in (ast.Return, ast.Raise) or (
                        type(sub) is ast.Call and terminal_name(sub.func) in ("exit", "quit", "_exit", "abort")):
                    return False
                if type(sub) is ast.Break and next(file.enclosing_loops(sub), None) is loop:
                    return False
        return True

    @staticmethod
    def _every_iteration(file: FileModel, loop: ast.AST, reach: dict) -> tuple[ast.Call, str] | None:
        """A collective the loop's body makes on every rank (not under a rank test)."""
        for node in getattr(loop, "body", []):
            for sub in ast.walk(node):
                if type(sub) is not ast.Call or rank_branch(file, sub) is not None:
                    continue
                if any(type(a) is ast.If for a in file.ancestors(sub) if any(b is loop for b in file.ancestors(a))):
                    continue  # under some test of its own: it may not run every iteration
                name = collective_name(file, sub)
                if name and not over_own_group(sub, name):
                    return sub, name
                for callee, _ in file.callees(sub):
                    if callee in reach:
                        return reach[callee]
        return None

    @staticmethod
    def _calls_under_rank_tests(file: FileModel, callee: str) -> list[tuple[ast.Call, Branch]]:
        out = []
        for call in file.calls:
            if terminal_name(call.func) == callee:
                branch = rank_branch(file, call)
                if branch is not None:
                    out.append((call, branch))
        return out

    @staticmethod
    def _expected_to_fail(file: FileModel, call: ast.Call) -> bool:
        """Inside `with self.assertRaises(...)` / `pytest.raises(...)`: a test
        that makes the hang on purpose and checks the timeout."""
        for anc in file.ancestors(call):
            if isinstance(anc, (ast.With, ast.AsyncWith)):
                for item in anc.items:
                    ctx = item.context_expr
                    if type(ctx) is ast.Call and terminal_name(ctx.func).startswith(("assertRaises", "raises")):
                        return True
        return False

    @staticmethod
    def _through(file: FileModel, callee: str, what: str, branch: Branch) -> str:
        if branch.exit is not None:
            return (f"{callee}() reaches {what} and is reached only by the ranks that do not {_word(branch.exit)} "
                    f"at line {branch.exit.lineno} (it depends on {depends_on(file, branch)}): the ranks that left "
                    "never make it and the job hangs")
        return (f"{callee}() reaches {what} and runs only on some ranks (it depends on {depends_on(file, branch)}): "
                + _others_do(file, branch, what.split("()", 1)[0], "never make it"))

    @staticmethod
    def _fix(file: FileModel, call: ast.Call, branch: Branch) -> str:
        if branch.exit is not None:
            # The call is not in the branch: moving it changes nothing. The
            # ranks must leave together, or all make the call before leaving.
            word = _word(branch.exit)
            up = file.parent.get(branch.exit)
            # (an exit in the `else:` leaves where the test fails: lint heldout16 u064's `else: continue`)
            leave = f"not ({source(branch.test)})" if type(up) is ast.If and branch.exit in up.orelse \
                else source(branch.test)
            return (f"stop = torch.tensor(int({leave})); dist.all_reduce(stop, op=dist.ReduceOp.MAX)  "
                    f"# then `if stop: {word}` on every rank, or make {source(call.func)}() before line "
                    f"{branch.exit.lineno}")
        return f"{source(call)}  # called by every rank, outside the branch at line {branch.line}"

    @staticmethod
    def _reached_through(file: FileModel, call: ast.Call, reach: dict) -> tuple[ast.Call, str] | None:
        for callee, _ in file.callees(call):
            if callee in reach:
                return reach[callee]
        return None

    @staticmethod
    def _root_name(func: ast.expr) -> str:
        while type(func) is ast.Attribute:
            func = func.value
        return func.id if type(func) is ast.Name else ""

    @staticmethod
    def _paired(file: FileModel, call: ast.Call, name: str, branch: Branch, found: list) -> bool:
        """The same collective under another rank test in the same function:
        the ranks take turns (rank 0 first, then the others)."""
        func = file.function(call)
        # (the same test written twice around the call is no turn-taking: `if is_main():
        # torch.save(model.state_dict())` after each stage and at the end, lint heldout15 u020; past an
        # early exit under it, as before: Megatron-DeepSpeed's rank 0 raises, the others' barrier, twice)
        return any(
            other is not call and other_name == name and other_branch.test is not branch.test
            and file.function(other) is func
            and (source(other_branch.test) != source(branch.test) or branch.exit is not None)
            and (branch.exit is not None
                 or not (_rank_parts(file, other_branch.test) & _rank_parts(file, branch.test)))
            for other, other_name, other_branch in found
        )

    def _maybe_project_function(self, file: FileModel, call: ast.Call) -> bool:
        """A call to a function imported from a module that may be the
        project's own (asked of the project later)."""
        root = self._root_name(call.func)
        base = file.imports.get(root) or file.relative_imports.get(root) or ""
        if base.lstrip(".").split(".", 1)[0] in LIBRARIES:  # `torch.save(...)`: no need to look the name up
            return False
        name = self._import_name(file, call)
        return bool(name) and name.lstrip(".").split(".", 1)[0] not in LIBRARIES

    @staticmethod
    def _import_name(file: FileModel, call: ast.Call) -> str:
        func = call.func
        attrs = []
        while type(func) is ast.Attribute:
            attrs.append(func.attr)
            func = func.value
        if type(func) is not ast.Name:
            return ""
        base = file.imports.get(func.id) or file.relative_imports.get(func.id)
        if base is None or file.lookup(func) is not None:
            return ""
        return ".".join([base] + list(reversed(attrs)))


def undecided(file: FileModel, branch: Branch, hit: Hit, parts: bool = True) -> Hit:
    """A warning, naming it, where the split also needs a test that is not on the rank and that this
    file does not fix: `if dry_run and rank == 0: return` before a barrier hangs only when --dry-run is
    passed (lint heldout16 u049); `if rank != 0 and args.eval and get_update_flag(epoch, args):` only
    on the path that flag picks (u060). A part every rank of a distributed job passes alike
    (`dist.is_initialized()`, `world_size > 1`) or a constant of the file's own decides nothing.
    (`parts=False`: only the gates around the split, not the other parts of its own test.)

    And where the path to the split passes a gate (`_gate`): an enclosing test, or an early exit
    above it in its function, that reads an option whose written default is off: a job started with
    its defaults never gets there (lint heldout22 u003: an FSDP gather past `if not
    ckpt_cfg.get("enable", False): return`, its reader's warning). Not a test of the file system
    (`if not Path("tokenizer_vocab.txt").exists():`): a first run on a fresh machine takes it (lint
    heldout15 u012's reader, an error; u020's called it a warning)."""
    test = branch.test
    node = hit.node if hit.node is not None else test
    gates = [t for t in file.conditions(node) if t is not test and not is_rank_condition(file, t) and _gate(t)]
    if gates:
        gate = gates[0]
        return replace(hit, severity=WARNING,
                       message=f"{hit.message}; only on a run where `{source(gate)[:60]}` (line {gate.lineno}) lets "
                       "it through: an option that is off unless the run's settings turn it on")
    # an `if` inside the rank test's own (`if local_rank == 0:` ... `if self.val_dataloader:` ... `validate()`) is one
    # more part of it, as `rank == 0 and x` is (lint heldout25c u024: the only trainer built is given val_dataset=None,
    # its judge said validate() is never reached)
    rank_if = file.parent.get(test)
    nested = [t for t in file.conditions(node) if type(rank_if) is ast.If and t is not test
              and type(file.parent.get(t)) is ast.If and rank_if in file.ancestors(t)] if parts else []
    values = list(test.values) if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
    if not parts or (len(values) == 1 and not nested):
        return hit
    open_ = [v for v in values + nested if not is_rank_condition(file, v) and not same_everywhere(v)
             and fixed_truth(file, v) is None and not _periodic(file, v)]
    if not open_:
        return hit
    names = " and ".join(f"`{source(v)[:50]}`" for v in open_)
    return replace(hit, severity=WARNING,
                   message=f"{hit.message}; only where {names} {'hold' if len(open_) > 1 else 'holds'} as well (line "
                   f"{', '.join(sorted({str(v.lineno) for v in open_}))}), "
                   "which this file does not decide")


def _gate(test: ast.expr) -> bool:
    """A test that reads an option with a default that is off (`cfg.get("enable", False)`,
    `getattr(args, "save", None)`): a job started with its defaults does not pass it."""
    for n in ast.walk(test):
        if type(n) is not ast.Call:
            continue
        name = terminal_name(n.func)
        default = n.args[1] if name == "get" and type(n.func) is ast.Attribute and len(n.args) == 2 else \
            n.args[2] if name == "getattr" and len(n.args) == 3 else None
        if type(default) is ast.Constant and (default.value is False or default.value is None):
            return True
    return False


def _rank_parts(file: FileModel, test: ast.expr) -> set[str]:
    """The rank tests of a condition, as written: `local_rank == 0` for `(step % n) == 0 and
    local_rank == 0`. Two conditions sharing one pass the same ranks: no turn-taking between them
    (lint heldout16 u019: the periodic and the final checkpoint, each under `local_rank == 0`). Past
    an early exit the pairing stays as it was (Megatron-DeepSpeed's retro_dataset.py: rank 0 raises,
    the others' barrier then exit, twice, on the mature-repository control)."""
    values = test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else [test]
    return {source(v) for v in values if is_rank_condition(file, v)}


def _periodic(file: FileModel, test: ast.expr) -> bool:
    """`global_step % save_every == 0` in a loop that counts `global_step` (its target, or a name
    assigned in its body): true every so many passes, so the loop decides that it holds (lint
    heldout16 u019's periodic checkpoint), unlike a flag of the command line."""
    if type(test) is not ast.Compare or not any(
            type(n) is ast.BinOp and type(n.op) is ast.Mod for n in ast.walk(test)):
        return False
    counted: set[str] = set()
    for loop in file.enclosing_loops(test):
        for node in [getattr(loop, "target", None), *loop.body]:
            for sub in ast.walk(node) if node is not None else ():
                if type(sub) is ast.Name and type(sub.ctx) is ast.Store:
                    counted.add(sub.id)
    return any(type(n) is ast.Name and n.id in counted for n in ast.walk(test))


def _block(branch: Branch) -> tuple[int, ...]:
    """The condition block a branch stands for: its test, the early exit, the other ranks' arm."""
    return (id(branch.test), id(branch.exit), *map(id, branch.other))


def _same_call(file: FileModel, call: ast.Call, branch: Branch) -> tuple[int, ...]:
    """A checkpoint's gather written again under the same test in the same function (each stage's
    save and the final save, both `if is_main(): torch.save(model.state_dict(), ...)`, lint heldout15
    u020): one mistake, said once, naming the other line."""
    scope = file.function(call)
    return (-1, id(scope) if scope is not None else 0, hash(source(call.func)), hash(source(branch.test)))


def _others_do(file: FileModel, branch: Branch, name: str, never: str) -> str:
    """What the ranks that skip the branch do: never make the collective (they wait elsewhere), or make
    the same one just after the branch, every rank (`if dist.is_initialized(): dist.barrier()` below
    the `if is_main():` whose helper ends in a barrier, lint heldout15 u020): theirs pairs with the one
    in the branch, and the ranks in it make one more than the others, so the later collectives pair
    wrongly."""
    same = _after_branch(file, branch, name)
    if same is None:
        return f"the other ranks {never} and the job hangs"
    return (f"the other ranks' {name}() at line {same.lineno}, after the branch, pairs with it, so these ranks make "
            f"one {name}() more than the others: every later collective pairs wrongly and the job hangs")


def _after_branch(file: FileModel, branch: Branch, name: str) -> ast.Call | None:
    """The first call after the rank branch (below its `if`, or below a block around it, in the same
    function) that makes the collective `name` on every rank."""
    node: ast.AST | None = file.parent.get(branch.test)
    scope = file.function(branch.test)
    while node is not None and node is not scope and not isinstance(node, ast.Module):
        up = file.parent.get(node)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(up, field, None)
            if type(block) is list and node in block:
                for stmt in block[block.index(node) + 1:]:
                    for sub in ast.walk(stmt):
                        if type(sub) is ast.Call and collective_name(file, sub) == name \
                                and rank_branch(file, sub) is None:
                            return sub
        node = up
    return None


def _word(stmt: ast.stmt) -> str:
    """The keyword of an early exit: `return`, `raise`, `break`, `continue`."""
    return type(stmt).__name__.lower()


def _writes_collective(text: str) -> bool:
    """Some collective's name followed by `(` appears in the text."""
    return any(stem in text and any(n in text for n in names) for stem, names in CALLED_BY_STEM)


def _ddp_backwards(file: FileModel) -> Iterator[tuple[ast.Call, Branch, ast.Call]]:
    """`.backward()` under a rank test on a value computed by a DistributedDataParallel model's forward
    (`output = model(x)` with `model = DDP(...)`, then `if rank == 0: output.sum().backward()`: lint
    heldout26d u047): DDP's autograd hooks all-reduce the gradient buckets during the backward, a collective
    every rank of the group must make. Not where the other ranks backpropagate too (the other arm), nor in a
    file that uses `no_sync()` (its backward communicates nothing there), nor where the forward itself runs
    on some ranks only (ddp-forward-on-one-rank says that one)."""
    if "no_sync" in file.text:
        return
    for call in file.calls:
        if type(call.func) is not ast.Attribute or call.func.attr != "backward":
            continue
        branch = rank_branch(file, call)
        if branch is None or branch.exit is not None or any(
                type(n) is ast.Call and terminal_name(n.func) == "backward" for o in branch.other for n in ast.walk(o)):
            continue
        build = _ddp_forward_of(file, call.func.value)
        if build is not None:
            yield call, branch, build


def _ddp_forward_of(file: FileModel, value: ast.expr) -> ast.Call | None:
    """The `DistributedDataParallel(...)` call whose model's forward `value` comes from, through its names
    (`output['pred'].sum()`, `output` bound to `model(x)`, `model` bound to `DDP(...)`), or None."""
    for sub in ast.walk(value):
        if type(sub) is not ast.Name or type(sub.ctx) is not ast.Load:
            continue
        for origin in file.origins(sub):
            if type(origin) is not ast.Call or type(origin.func) is not ast.Name:
                continue
            if rank_branch(file, origin) is not None:
                continue  # the forward is on some ranks too: ddp-forward-on-one-rank's cause
            builds = [b for b in file.origins(origin.func) if wrapper_kind(file, b) == "DistributedDataParallel"]
            if builds and all(type(b) is ast.Call for b in builds):
                return builds[0] if type(builds[0]) is ast.Call else None
    return None
