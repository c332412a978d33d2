from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, is_gpu_count, rank_kind
from gpudoctor.linter.model import FileModel, constant, keyword
from gpudoctor.linter.rule import Hit, Rule

# The most GPUs one machine usually holds (a DGX node): a job written for a
# fixed world no larger is written for one host.
ONE_NODE_GPUS = 8


class RankFromLocalRank(Rule):
    """`init_process_group(rank=...)` given the *local* rank (LOCAL_RANK,
    `args.local_rank`): right on one node, where the two are equal, but on a
    second node its processes claim ranks 0..N-1 again, two processes hold each
    rank and the rendezvous hangs or times out.

    Flagged: the `rank` argument of `init_process_group` whose value comes
    (in this file) from `LOCAL_RANK` or a `local_rank`. A spawned worker's
    index, a value computed from the node rank, or a group whose store is a
    local file (`init_method="file://..."`: one machine) is not flagged, nor a
    group whose `world_size` is this machine's GPU count (`torch.cuda.device_count()`):
    the job is one node by construction, where the local rank is the rank (a
    research trainer in issue 41's dev5 that the rule called wrong), nor one
    whose `world_size` is a literal one machine's GPUs can hold (at most 8:
    `world_size=2`, a script written for the two GPUs of one host; dev6's
    debug script), nor one whose `world_size` is the number of processes the
    file's mp.spawn starts, given to the spawned function whose index is the
    rank (`mp.spawn(main_worker, nprocs=args.nprocs, ...)`, `def
    main_worker(local_rank, ...)`, `world_size=args.nprocs`: the processes of
    one machine are the whole world; issue 41's dev7). Asked for
    by issue 41's sample (a two-node forum repro, a course script, a notebook).
    A warning: the script may only ever run on one node.
    """

    id = "rank-from-local-rank"
    message = "init_process_group is given the local rank as the global rank: on a second node two processes claim each rank"
    fix = 'dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))'
    in_tests = False  # a test picks its devices and files for one machine on purpose
    needles = ("init_process_group",)

    VALID = (
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
        ''',
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(gpu, args):
            rank = args.node_rank * args.gpus + gpu
            dist.init_process_group("nccl", rank=rank, world_size=args.world_size)

        if __name__ == "__main__":
            mp.spawn(worker, args=(args,), nprocs=args.gpus)
        ''',
        '''
        import torch
        import torch.distributed as dist

        gpus = torch.cuda.device_count()
        dist.init_process_group("nccl", rank=args.local_rank, world_size=gpus)
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl", rank=args.local_rank, world_size=2)  # the two GPUs of one host
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl", init_method="env://", world_size=args.world_size,
                                rank=args.local_rank)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls_to("init_process_group", TORCH):
            value = keyword(call, "rank")
            if value is None:
                continue
            init = constant(keyword(call, "init_method", 1), str)
            if init is not None and init.startswith("file://"):
                continue  # a FileStore on a local path: one machine
            if self._one_node(file, keyword(call, "world_size")) or _spawned_world(file, call):
                continue
            kind, how = rank_kind(file, value)
            if kind == "local":
                yield Hit(value, message=f"init_process_group's rank comes from the local rank ({how}): on a second "
                          "node two processes claim each rank and the rendezvous hangs")

    @staticmethod
    def _one_node(file: FileModel, world_size: ast.expr | None) -> bool:
        """The world size is this machine's GPU count, or a literal one machine
        holds: one node, by construction."""
        if world_size is None:
            return False
        size = constant(world_size, int)
        if size is not None and 0 < size <= ONE_NODE_GPUS:
            return True
        return is_gpu_count(file, world_size)


def _spawned_world(file: FileModel, init: ast.Call) -> bool:
    """`init` runs in a function mp.spawn starts, its world size is the number of processes
    that spawn starts (`world_size=args.nprocs` with `nprocs=args.nprocs`, or `args.world_size
    = len(args.gpu_ids)` set beside `mp.spawn(run, nprocs=len(args.gpu_ids))`): the processes
    of this one machine are the whole job, and the spawn index is the rank (dev7 u003
    Ahmedhasssan/IM_SNN-SpQuant_SNN, u039 XYaoooo/DPT)."""
    func = file.function(init)
    size = keyword(init, "world_size", 3)
    if func is None or size is None or not file.spawned(func):
        return False
    sizes = {ast.unparse(size)} | {ast.unparse(o) for o in file.origins(size) if isinstance(o, ast.AST)}
    for ref in file.references.get(func, []):
        spawn = file.parent.get(ref)
        if type(spawn) is not ast.Call or not file.is_spawn(spawn):
            continue
        nprocs = keyword(spawn, "nprocs", 2)
        if nprocs is None:
            continue
        counts = {ast.unparse(nprocs)} | {ast.unparse(o) for o in file.origins(nprocs) if isinstance(o, ast.AST)}
        # `args.world_size = len(args.gpu_ids)` written in the spawning function before the spawn
        written = {ast.unparse(stmt.value) for stmt in ast.walk(file.function(spawn) or file.tree)
                   if type(stmt) is ast.Assign and stmt.lineno < spawn.lineno
                   and any(ast.unparse(t) in sizes for t in stmt.targets)}
        if counts & (sizes | written):
            return True
    return False
