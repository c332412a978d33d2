from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, is_gpu_count, is_world_size, rank_kind
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import WARNING, Hit, Rule

# Names that hold a process's index on its own node: `args.gpu` is the local GPU
# index in the scripts that follow pytorch/examples' ImageNet launcher.
LOCAL_NAMES = {"local_rank", "gpu", "gpu_id", "local_gpu"}


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

    Not flagged (issue 41 point 2, measured): a save, a log folder or a writer gated on
    `local_rank == 0`. On a second node its first process writes too; lint heldout20's
    reader asked for it five times, the readers of heldout14 to heldout17 passed over
    the same gate in seventeen scripts.
    """

    id = "local-rank-as-global-rank"
    severity = WARNING
    message = "a local index used where the collective means the global rank: wrong on a second node"
    fix = "use the global rank (dist.get_rank(), RANK) for the collective's order and its dst"
    needles = ("all_gather", "reduce(", "DistributedSampler", "rank=")

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
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if group_rank_is_local(file):
            return  # one cause, said once where it is made: rank-from-local-rank names these lines
        yield from self.uses(file)

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
        (`get_dataloader(..., rank=args.local_rank, world_size=dist.get_world_size())`),
        told its rank by a local index: the shard is chosen per node, so the first
        process of every node reads the same shard."""
        sampler = file.is_call_to(call, "DistributedSampler", TORCH)
        value = keyword(call, "rank", 2) if sampler else keyword(call, "rank")
        if value is None or file.is_call_to(call, "init_process_group", TORCH):
            return  # (init_process_group's rank: rank-from-local-rank)
        size = keyword(call, "num_replicas", 1) if sampler else keyword(call, "world_size") or keyword(call, "num_replicas")
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
        yield Hit(call if sampler else value, message=f"{what} is told its rank by {how}, an index on this node, beside the job's world "
                  "size: right on one node; on a second node its first process takes the same shard as the first "
                  "node's, and a shard of the data is never read",
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
