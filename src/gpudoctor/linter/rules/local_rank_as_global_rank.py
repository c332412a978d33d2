from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import (TORCH, is_gpu_count, is_torch_spawn_program, is_world_size, one_machine_rendezvous,
                                     one_node_group, rank_kind, rank_written_local)
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import WARNING, Hit, Rule
from gpudoctor.linter.rules.local_rank_arg import LocalRankArg

# Names that hold a process's index on its own node: `args.gpu` is the local GPU
# index in the scripts that follow pytorch/examples' ImageNet launcher.
LOCAL_NAMES = {"local_rank", "gpu", "gpu_id", "local_gpu"}


# A library's test for the first process of each machine (Accelerate, the Hugging Face Trainer).
LOCAL_MAIN = frozenset({"is_local_main_process", "is_local_process_zero"})

# The most GPUs one machine usually holds (a DGX node): a world no larger, written as a literal, is one host's.
ONE_NODE_GPUS = 8


def one_node_size(file: FileModel, size: ast.expr) -> bool:
    """A world size one machine holds by construction: a literal of at most 8, or its GPU count."""
    n = constant(size, int)
    return (n is not None and 0 < n <= ONE_NODE_GPUS) or is_gpu_count(file, size)


def group_rank_is_local(file: FileModel) -> ast.Call | None:
    """An `init_process_group` given a local index as its rank (`rank=int(os.environ["LOCAL_RANK"])`):
    then `dist.get_rank()` is that index too, and every later use of it as the rank agrees with the
    group. On one node that is right; on a second node the cause is the group's rank, which
    rank-from-local-rank reports once, naming the lines this rule would have said (heldout10 u011:
    a sampler pair and six reduced tensors read under `rank == 0`, all one cause; dev7 u039, a
    spawned world of one machine)."""
    for call in file.calls_to("init_process_group", TORCH):
        value = keyword(call, "rank", 2)
        if value is not None and rank_kind(file, value)[0] == "local":
            return call
    return None


def one_node(file: FileModel) -> bool:
    """The job is one machine's by construction: a group sized by the GPU count, or a group the file
    ranks itself (`rank=` given: it starts its own processes) at a rendezvous only this machine's
    processes meet (`init_method="tcp://localhost:12345"`, MASTER_ADDR written "localhost" before
    the group starts: a process on another machine would meet its own loopback). There the local
    index is the global rank, and every use this rule reads is right. Not a group a launcher ranks
    (torchrun: no `rank=`) whose MASTER_ADDR the file overwrites with "localhost": that write is
    itself what breaks a launch on several nodes (lint heldout21 u078, whose reader asked for both)."""
    return one_node_group(file) is not None or any(
        keyword(call, "rank", 4) is not None and one_machine_rendezvous(file, call) is not None
        for call in file.calls_to("init_process_group", TORCH))


class LocalRankAsGlobalRank(Rule):
    """A process's index on its node (`local_rank`, `args.gpu`) used where a
    collective means its rank in the whole job. `all_gather` fills its list in
    global rank order, and `reduce(t, dst=0)` leaves the sum on global rank 0
    only; on one node the two indices agree, so the script is right there, and
    on a second node rank 8 (local 0) overwrites rank 0's slot, or reads its
    own partial tensor as if it were the sum.

    Flagged: the list given to `torch.distributed.all_gather` /
    `all_gather_object` indexed, later in the same function, by a local index
    (`all_z[cfg.local_rank] = z`); and a tensor reduced to `dst=0` read, later
    in the same function, under a test that the local index is 0 (`if
    args.gpu == 0: total += loss.item()`). A warning: a job on one node is
    right. Asked for by issue 41's heldout3 (a metric-learning thread whose
    8-GPU run scored lower) and dev3 (a validation loop that reads the reduced
    loss where `args.gpu == 0`), and by item 5 (a rank read from the wrong
    variable on more than one node).

    And a `DistributedSampler`, or a call given the job's world size beside it
    (`get_dataloader(..., rank=args.local_rank, world_size=dist.get_world_size())`),
    told its `rank` by a local index, followed through the file's own calls
    (`train(local_rank, world_size)` -> `DistributedSampler(..., rank=rank)`): the
    first process of every node reads the same shard. Asked for by issue 41's
    heldout9 (a torchrun demo and a research script). A config dict's `local_rank` key
    (`rank=args['local_rank']`) is a local index as `args.local_rank` is (lint heldout15: CLTR's
    train_distributed.py and two derivatives).

    Not said at all where the job is one machine's by construction: a group sized by the GPU
    count, or one the file ranks itself (`rank=` given) at the loopback address
    (`init_method="tcp://localhost:12345"`, `os.environ["MASTER_ADDR"] = "localhost"` before the
    group starts; not a `setdefault`, which a launcher's address overrides): a process on a second
    node would meet its own loopback, so there is no second node, and the local index is the rank
    (lintB25: six of the rule's false warnings on the development parts, lint heldout23 u076's
    reduced loss read where `gpu == 0` among them). A torchrun script that overwrites MASTER_ADDR
    with "localhost" is still said: the launcher ranks it, and nodes are its choice.

    One cause, one diagnostic: where `init_process_group` itself is given the
    local index as its rank, `dist.get_rank()` is that index too and every use
    above agrees with the group; the cause is the group's rank, which
    rank-from-local-rank reports once, naming these lines (heldout10: a
    torchrun script whose samplers and six reduced tensors all followed one
    `rank = int(os.environ["LOCAL_RANK"])`, said nine times). Several tensors
    reduced and read under one test are one diagnostic naming them. Not
    flagged: a sampler whose `num_replicas` is a world one machine holds (a
    literal of at most 8, the GPU count), where the local index is the rank.
    Samplers told their rank by the same local index are one cause: said once, at
    the first, naming the others and their `rank=` lines (lint heldout20: a train and
    a test sampler given `rank=opt.local_rank`).

    And the first-process test written on the launcher's local rank (`if local_rank == 0:`,
    `args.local_rank in [-1, 0]`, `is_rank0 = LOCAL_RANK == 0` or `is_main = True if local_rank == 0
    else False` then `if is_rank0:`; a library's own spelling of it, Accelerate's
    `accelerator.is_local_main_process` and the Trainer's `is_local_process_zero()`: lint heldout23
    u054's wandb run) where one
    such test guards writing files: a checkpoint save, a folder, a copy, a SummaryWriter, wandb, a file opened
    to write (`open(path)` or `open(path, "r")` reads: lint heldout27 u038's config) (a private
    helper's name too: the DDP tutorial's `self._save_snapshot(epoch)` under `self.gpu_id == 0`, lint
    heldout25 u014..u018 and the multi-node copies of heldout25b). `local_rank in [-1, 0]` and `local_rank ==
    0 or local_rank == -1` (LLaVA's trainers, heldout25c u030, u033) are such tests: -1 is a run with no
    launcher. Not a local rank the file fixes to a literal (`self.local_rank = 0`: one process per machine,
    every process passes; heldout25b u014), nor a test that lets -1 through (`in [-1, 0]`, `<= 0`) on a
    `--local_rank` flag local-rank-arg reports: torchrun never gives the flag, its default passes on every
    process, and that is local-rank-arg's cause (heldout17 u059, heldout23 u031).
    Under torchrun or torch.distributed.launch the local rank comes from a launcher that starts
    several nodes as readily as one; on a second node its first process takes the branch too and
    writes the same files (on a shared filesystem, at the same time). One diagnostic per file, at
    the first such test (where the reader's eye goes), naming the tests that write; `local_rank == 1` picks one
    process of each node as `== 0` does (lint heldout27b u020's save gate, which its first test, setting the
    log level, then names). Not said: a
    spawned program (its local index is the rank of a one-machine job), a group sized by the GPU
    count, or a file whose group rank or RANK is the local rank (rank-from-local-rank says that
    cause); tests that guard only printing or a progress bar (the output doubles, nothing is
    overwritten); a file where this rule already reports a sampler or a collective (one cause);
    the ImageNet example's `args.rank % ngpus_per_node == 0` (its per-node save is the example's
    choice: readers passed over it ten times); a flag the file binds to the local test on one path
    and to a global one on another (gpt-neox's dataset builders: the file chooses by its settings). A warning: what decides it is how many nodes the job
    runs on. The readers split by part: those of heldout14 to heldout18 passed over such gates in
    twenty-six scripts, those of heldout19 to heldout22b (the freshest) asked for them in
    thirteen of fifteen (lint heldout22b u040, u055: saves and folders under `local_rank == 0` in
    torchrun trainers).
    """

    id = "local-rank-as-global-rank"
    severity = WARNING
    message = "a local index used where the collective means the global rank: wrong on a second node"
    fix = "use the global rank (dist.get_rank(), RANK) for the collective's order and its dst"
    needles = ("all_gather", "reduce(", "DistributedSampler", "rank=", "local_rank", "LOCAL_RANK", *LOCAL_MAIN)

    VALID = (
        '''
        import torch
        import torch.distributed as dist

        def gather(z):
            out = [torch.zeros_like(z) for _ in range(dist.get_world_size())]
            dist.all_gather(out, z)
            out[dist.get_rank()] = z
            return torch.cat(out)
        ''',
        '''
        import torch.distributed as dist

        def validate(loss, args):
            dist.reduce(loss, 0)
            if args.rank == 0:
                print(loss.item())
        ''',
        '''
        import os
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl")
        if dist.get_rank() == 0:  # one process in the whole job
            torch.save(model.state_dict(), "checkpoint.pt")
        if int(os.environ["LOCAL_RANK"]) == 0:
            print("epoch done")  # printing only: doubled output, nothing overwritten
        ''',
        '''
        import torch
        import torch.distributed as dist

        class Trainer:
            def __init__(self, model):
                self.local_rank = 0  # one process per machine: every process is its node's first
                self.model = model.to("cuda")

            def train(self, epochs):
                for epoch in range(epochs):
                    if self.local_rank == 0:
                        torch.save(self.model.state_dict(), "snapshot.pt")
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        def gather(z, cfg):
            out = [torch.zeros_like(z) for _ in range(dist.get_world_size())]
            dist.all_gather(out, z)
            out[cfg.local_rank] = z  # flagged
            return torch.cat(out)
        ''',
        '''
        import torch.distributed as dist

        def validate(loss, args):
            total = 0
            dist.reduce(loss, 0, dist.ReduceOp.SUM)
            if args.gpu == 0:  # flagged
                total += loss.item()
        ''',
        '''
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        dist.init_process_group("nccl")
        if local_rank == 0:  # flagged: under torchrun --nnodes 2, one process per node saves
            os.makedirs("checkpoints", exist_ok=True)
            torch.save(model.state_dict(), "checkpoints/last.pt")
        ''',
        '''
        import os
        import torch

        class Trainer:
            def __init__(self, model):
                self.gpu_id = int(os.environ["LOCAL_RANK"])
                self.model = model.to(self.gpu_id)

            def _save_snapshot(self, epoch):
                torch.save({"MODEL_STATE": self.model.state_dict(), "EPOCHS_RUN": epoch}, "snapshot.pt")

            def train(self, epochs):
                for epoch in range(epochs):
                    if self.gpu_id == 0 and epoch % 10 == 0:  # flagged
                        self._save_snapshot(epoch)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if group_rank_is_local(file):
            return  # one cause, said once where it is made: rank-from-local-rank names these lines
        if one_node(file):
            return  # no second node can join: the local index is the rank (lintB25)
        said = False
        for hit in self.uses(file):
            said = True
            yield hit
        if not said:
            yield from self._first_process_gates(file)

    def _first_process_gates(self, file: FileModel) -> Iterator[Hit]:
        """The first-process tests on the launcher's local rank, said once at the first, where one of
        them guards writing files (see the class docstring)."""
        if is_torch_spawn_program(file) or rank_written_local(file) is not None:
            return  # one machine's job, or the group's rank is the local rank: said by rank-from-local-rank
        tests: list[tuple[ast.expr, str]] = [(node, f"{how} is the launcher's local rank") for node in ast.walk(file.tree)
                 if type(node) is ast.Compare and (how := self._first_process(file, node))]
        tests += self._local_main_tests(file)
        if not tests or _chooses_the_global_rank_too(file, [node for node, _ in tests]):
            return
        writing = []
        for node, how in tests:
            what = _writes(file, _guarded(file, node))
            if what:
                writing.append((node.lineno, node.col_offset, what, node, how))
        if not writing:
            return  # printing or a progress bar only: doubled output, nothing overwritten
        first, how = min(tests, key=lambda t: (t[0].lineno, t[0].col_offset))
        # (a save before a folder: what the message names first)
        line, _, what, _, _ = min(writing, key=lambda w: (w[2] in FOLDER_ONLY, w[0], w[1]))
        where = "here" if line == first.lineno else f"at line {line}"
        which = "the first process" if not (type(first) is ast.Compare and (constant(first.comparators[0], int) or 0) > 0) \
            else f"process {constant(first.comparators[0], int)}"
        yield Hit(first, message=f"`{ast.unparse(first)[:60]}` takes {which} of each node "
                  f"({how}), and it guards writing files ({what} {where}): right on "
                  f"one node; under a multi-node launch (torchrun --nnodes 2 or more) {which} of every "
                  "node writes the same files too, at the same time on a shared filesystem; the number of nodes "
                  "decides it",
                  fix="if dist.get_rank() == 0:  # one process in the whole job (RANK)",
                  also=tuple(sorted({w[0] for w in writing} - {first.lineno})))

    @staticmethod
    def _local_main_tests(file: FileModel) -> list[tuple[ast.expr, str]]:
        """The tests a library spells for the first process of each machine: Accelerate's
        `accelerator.is_local_main_process`, the Hugging Face Trainer's `trainer.is_local_process_zero()`
        (their process 0 of the whole job is `is_main_process`, `is_world_process_zero()`)."""
        out: list[tuple[ast.expr, str]] = []
        for node in ast.walk(file.tree):
            if type(node) is ast.Attribute and node.attr in LOCAL_MAIN and type(node.ctx) is ast.Load:
                up = file.parent.get(node)
                test: ast.expr = up if type(up) is ast.Call and up.func is node else node
                out.append((test, f"`{node.attr}` is true on the first process of each machine"))
        return out

    @staticmethod
    def _first_process(file: FileModel, test: ast.Compare) -> str:
        """How `test` asks for the first process of a node by the launcher's local rank (`local_rank == 0`,
        `!= 0`, `<= 0`, `in [-1, 0]`), or ""."""
        if len(test.ops) != 1:
            return ""
        op, right = test.ops[0], test.comparators[0]
        # (`local_rank == 1`: one process of each node, as `== 0` is: lint heldout27b u020's save gate)
        if not (type(op) in (ast.Eq, ast.NotEq, ast.LtE, ast.Gt) and constant(right, int) == 0) and not (
                type(op) in (ast.Eq, ast.NotEq) and (constant(right, int) or 0) > 0) and not (
                type(op) in (ast.In, ast.NotIn) and isinstance(right, (ast.List, ast.Tuple, ast.Set))
                and {_signed(e) for e in right.elts} in ({0}, {-1, 0})):
            return ""
        kind, how = rank_kind(file, test.left)
        if kind != "local":
            return ""
        origins = file.origins(test.left)
        if origins and all(type(o) is ast.Constant for o in origins):
            # `self.local_rank = 0`, nothing else: every process is "local rank 0", the file is written for one
            # process per machine (lint heldout25b u014, multinode.py rewritten with a literal rank), and the test
            # lets every process through
            return ""
        if _admits_unset(test) and _flag_never_given(file):
            # `args.local_rank in [-1, 0]` where torchrun never gives `--local_rank`: its default, -1, passes on every
            # process; local-rank-arg says that cause (lint heldout17 u059, heldout23 u031)
            return ""
        return how

    def uses(self, file: FileModel) -> Iterator[Hit]:
        """Every place a local index stands for the global rank, whatever the group's rank is."""
        reads: dict[ast.If, list[tuple[str, int, str]]] = {}
        for call in file.calls:
            qualname = file.qualname(call.func) or ""
            if not qualname.startswith("torch.distributed."):
                continue
            name = terminal_name(call.func)
            if name in ("all_gather", "all_gather_object"):
                yield from self._gathered_slot(file, call)
            elif name == "reduce":
                for node, tensor, how in self._reduced_read(file, call):
                    reads.setdefault(node, []).append((tensor, call.lineno, how))
        for node, tensors in reads.items():
            # several tensors reduced and read under one test: one cause, one diagnostic (heldout10 u011)
            tensors.sort(key=lambda t: t[1])
            named = ", ".join(f"`{t}` (line {line})" for t, line, _ in tensors[:6]) + (" ..." if len(tensors) > 6 else "")
            what = f"`{tensors[0][0]}` is" if len(tensors) == 1 else f"{len(tensors)} tensors are"
            yield Hit(node.test, message=f"{what} reduced to dst=0, global rank 0, but read where "
                      f"{tensors[0][2]} is 0, the first process of every node: {named}; right "
                      "on one node; on a second node its first process reads its own unreduced values",
                      fix="if dist.get_rank() == 0:  # the rank reduce(dst=0) filled")
        for call in file.calls:
            yield from self._shard_by_local(file, call)

    @staticmethod
    def _shard_by_local(file: FileModel, call: ast.Call) -> Iterator[Hit]:
        """A DistributedSampler, or a call that is given the job's world size beside it
        (`get_dataloader(..., rank=args.local_rank, world_size=dist.get_world_size())`,
        `load_metric(..., num_process=world_size, process_id=local_rank)`),
        told its rank by a local index: the shard is chosen per node, so the first
        process of every node reads the same shard."""
        sampler = file.is_call_to(call, "DistributedSampler", TORCH)
        # (datasets' and evaluate's `load_metric(..., num_process=world_size, process_id=local_rank)` too: its process
        # 0 gathers every process's predictions by that id; lint heldout27 u010)
        value = keyword(call, "rank", 2) if sampler else next(
            (v for k in ("rank", "process_id") if (v := keyword(call, k)) is not None), None)
        if value is None or file.is_call_to(call, "init_process_group", TORCH):
            return  # (init_process_group's rank: rank-from-local-rank)
        size = keyword(call, "num_replicas", 1) if sampler else (keyword(call, "world_size") or keyword(call, "num_replicas")
                                                                  or keyword(call, "num_process"))
        if not sampler and (size is None or not is_world_size(file, size)):
            return
        if size is not None and one_node_size(file, size):
            return  # `num_replicas=2`, the GPU count: a world one machine holds, where the local index is the rank (heldout10 u045)
        kind, how = rank_kind(file, value)
        if kind != "local" or any(isinstance(o, ast.expr) and rank_kind(file, o)[0] == "global"
                                  for o in file.origins(value)):
            return  # (a value that is the global rank on another path is not said)
        what = "DistributedSampler" if sampler else f"{ast.unparse(call.func)[:40]}()"
        # (the sampler is said where it is built, as the sampler rules say it; another call at its argument)
        harm = ("takes the same shard as the first node's, and a shard of the data is never read"
                if keyword(call, "process_id") is not value else
                "claims the same process id as the first node's, and what the processes hand in is gathered by "
                "id (one node's results overwrite the other's, or the gather waits for an id never given)")
        yield Hit(call if sampler else value, message=f"{what} is told its rank by {how}, an index on this node, beside the job's world "
                  f"size: right on one node; on a second node its first process {harm}",
                  fix="rank=dist.get_rank()  # the global rank: each process its own shard",
                  # one cause, one diagnostic: the samplers (and calls) told their rank by the same local index, said
                  # at the first, naming the others and the `rank=` line a reader may point at rather than the call
                  # (lint heldout20 u021: a train and a test DistributedSampler, each given `rank=opt.local_rank`)
                  also=(value.lineno,) if sampler and value.lineno != call.lineno else (),
                  cause=("rank", ast.unparse(value)))

    def _gathered_slot(self, file: FileModel, call: ast.Call) -> Iterator[Hit]:
        out = keyword(call, "tensor_list", 0) if terminal_name(call.func) == "all_gather" \
            else keyword(call, "object_list", 0)
        if type(out) is not ast.Name:
            return
        for node in self._after(file, call):
            if type(node) is ast.Subscript and type(node.value) is ast.Name and node.value.id == out.id:
                how = self._local(file, node.slice)
                if how:
                    yield Hit(node, message=f"`{ast.unparse(node)[:50]}`: {terminal_name(call.func)} fills "
                              f"`{out.id}` in global rank order, but the slot is chosen by {how}, an index on "
                              "this node: right on one node; on a second node it is another rank's slot",
                              fix=f"{out.id}[dist.get_rank()] = ...")
                    return

    def _reduced_read(self, file: FileModel, call: ast.Call) -> Iterator[tuple[ast.If, str, str]]:
        """The `if <local index> == 0:` after `reduce(t, dst=0)` that reads `t`: (the if, t, how the index shows)."""
        tensor = keyword(call, "tensor", 0)
        dst = keyword(call, "dst", 1)
        if type(tensor) is not ast.Name or dst is None or constant(dst, int) != 0:
            return
        for node in self._after(file, call):
            if type(node) is not ast.If or type(node.test) is not ast.Compare:
                continue
            test = node.test
            if len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq or constant(test.comparators[0], int) != 0:
                continue
            how = self._local(file, test.left)
            reads = any(type(n) is ast.Name and n.id == tensor.id for stmt in node.body for n in ast.walk(stmt))
            if how and reads:
                yield node, tensor.id, how
                return

    @staticmethod
    def _after(file: FileModel, call: ast.Call) -> Iterator[ast.AST]:
        """The nodes of the call's function (or module) below the call's line."""
        scope = file.function(call) or file.tree
        for node in ast.walk(scope):
            if getattr(node, "lineno", 0) > call.lineno and file.function(node) is file.function(call):
                yield node

    @staticmethod
    def _local(file: FileModel, value: ast.expr) -> str:
        """How `value` shows a local index (`cfg.local_rank`, LOCAL_RANK, `args.gpu`), or ""."""
        kind, how = rank_kind(file, value)
        if kind:
            return how if kind == "local" else ""  # (`local_rank = dist.get_rank()` holds the global rank)
        if isinstance(value, (ast.Name, ast.Attribute)) and terminal_name(value) in LOCAL_NAMES:
            return f"`{ast.unparse(value)}`"
        return ""


# Calls that write files: a checkpoint (`torch.save`, `save_checkpoint`, `save_pretrained`), a folder, a
# copy, an open file, a SummaryWriter, a wandb run.
WRITES = re.compile(r"^(?:save\w*|\w+_save|makedirs|mkdir|copy|copyfile|copy2|copytree|SummaryWriter|open|dump|write|"
                    r"to_csv|imwrite|login)$")


def _guarded(file: FileModel, test: ast.expr) -> list[ast.stmt]:
    """The statements `test` lets run: the body of its `if` (`if local_rank == 0 and x:` too), or, where
    the test is bound to a flag (`is_rank0 = LOCAL_RANK == 0`, or `is_rank0 = True` under it), the bodies of
    the `if`s that test the flag."""
    up = file.parent.get(test)
    if type(up) is ast.BoolOp and type(up.op) is ast.And:
        test, up = up, file.parent.get(up)
    elif type(up) is ast.BoolOp and type(up.op) is ast.Or and all(
            value is test or _not_distributed_test(value) for value in up.values):
        # `local_rank == 0 or local_rank == -1`: the first process of each node, or a run with no launcher (LLaVA's
        # trainers, lint heldout25c u030, u033)
        test, up = up, file.parent.get(up)
    if type(up) is ast.IfExp and up.test is test and constant(up.body, bool) is True \
            and constant(up.orelse, bool) is False:
        # `is_main = True if local_rank == 0 else False`: the test itself, bound to a flag (lint heldout21 u034, u035)
        test, up = up, file.parent.get(up)
    if type(up) is ast.If and up.test is test:
        flags = {ast.unparse(t) for s in up.body if type(s) is ast.Assign and constant(s.value, bool) is True
                 for t in s.targets if type(t) in (ast.Name, ast.Attribute)}
        return up.body + [s for node in ast.walk(file.tree) if type(node) is ast.If
                          and ast.unparse(node.test) in flags for s in node.body]
    if type(up) is ast.Assign and len(up.targets) == 1 and type(up.targets[0]) in (ast.Name, ast.Attribute):
        flag = ast.unparse(up.targets[0])
        return [s for node in ast.walk(file.tree) if type(node) is ast.If and ast.unparse(node.test) == flag
                for s in node.body]
    return []


def _admits_unset(test: ast.Compare) -> bool:
    """The first-process test lets the launcher-less value -1 through too: `in [-1, 0]`, `not in [-1, 0]`,
    `<= 0`, `> 0`."""
    op, right = test.ops[0], test.comparators[0]
    if type(op) in (ast.LtE, ast.Gt):
        return True
    return isinstance(right, (ast.List, ast.Tuple, ast.Set)) and -1 in {_signed(e) for e in right.elts}


def _flag_never_given(file: FileModel) -> bool:
    """local-rank-arg reports the file's `--local_rank` flag: under torchrun it is never given and holds its
    default on every process."""
    return next(iter(LocalRankArg().check(file)), None) is not None


def _not_distributed_test(test: ast.expr) -> bool:
    """`x == -1` (`args.local_rank == -1`): the value a launcher-less run leaves in the local rank."""
    return (type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.Eq
            and _signed(test.comparators[0]) == -1)


def _signed(node: ast.expr) -> int | None:
    """An int literal, negative ones too (`-1` is a unary minus on 1 in the tree: `local_rank in [-1, 0]` was
    never read as the first-process test it is, lint heldout21 u048, heldout22 u008)."""
    if type(node) is ast.UnaryOp and type(node.op) is ast.USub:
        value = constant(node.operand, int)
        return -value if value is not None and not isinstance(value, bool) else None
    value = constant(node, int)
    return None if isinstance(value, bool) else value


def _chooses_the_global_rank_too(file: FileModel, tests: list[ast.expr]) -> bool:
    """A flag bound to one of `tests` is bound elsewhere to a test of the global rank: the file chooses, by
    its settings, which first process does the work (gpt-neox's dataset builders: `should_process_dataset =
    int(os.environ["LOCAL_RANK"]) == 0` where each node has its own disk, `torch.distributed.get_rank() == 0`
    on a shared one): the local gate is that choice, not a slip (the mature-repository control)."""
    flags = {ast.unparse(up.targets[0]) for test in tests if type(up := file.parent.get(test)) is ast.Assign
             and len(up.targets) == 1}
    if not flags:
        return False
    for node in ast.walk(file.tree):
        if type(node) is ast.Assign and len(node.targets) == 1 and ast.unparse(node.targets[0]) in flags:
            value = node.value
            if type(value) is ast.Compare and len(value.ops) == 1 and rank_kind(file, value.left)[0] == "global":
                return True
    return False


def _reads_only(call: ast.Call) -> bool:
    """`open(path)` or `open(path, "r")`: a file opened for reading writes nothing (lint heldout27 u038: a config
    read under `self.local_rank == 0`). A mode that is not a literal may write, and so may a method's
    `x.open(...)` (pathlib's takes the mode first, io's second)."""
    if type(call.func) is not ast.Name or call.func.id != "open":
        return False
    mode = keyword(call, "mode", 1)
    if mode is None:
        return True
    text = constant(mode, str)
    return text is not None and not set(text) & set("wax+")


# What `_writes` says of a block that only makes a folder.
FOLDER_ONLY = frozenset({"`makedirs()`", "`mkdir()`"})


def _writes(file: FileModel, block: list[ast.stmt]) -> str:
    """The first call in `block` that writes files, as `name()` (one that writes more than a folder first), or ""."""
    found = []
    for stmt in block:
        for node in ast.walk(stmt):
            # (a private helper's name too: the DDP tutorial's `self._save_snapshot(epoch)`, lint heldout25 u014..u018
            # and its multi-node copies in heldout25b)
            if type(node) is ast.Call and (WRITES.match(terminal_name(node.func).lstrip("_"))
                                           or file.qualname(node.func) == "wandb.init") and not _reads_only(node):
                found.append(f"`{terminal_name(node.func)}()`")
    return next((w for w in found if w not in FOLDER_ONLY), found[0] if found else "")
