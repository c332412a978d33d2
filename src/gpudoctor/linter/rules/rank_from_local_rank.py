from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, rank_kind
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule


GLOBAL_NAMES = {"rank", "global_rank", "world_rank"}


class RankFromLocalRank(Rule):
    """`init_process_group(rank=...)` given the *local* rank (LOCAL_RANK,
    `args.local_rank`): right on one node, where the two are equal, but on a
    second node its processes claim ranks 0..N-1 again, two processes hold each
    rank and the rendezvous hangs or times out.

    Flagged: the `rank` argument of `init_process_group` whose value comes
    (in this file) from `LOCAL_RANK` or a `local_rank`; and, where no
    `init_process_group(rank=...)` is in the file to follow it into, the
    environment's LOCAL_RANK stored as the process's rank itself
    (`args.rank = int(os.environ["LOCAL_RANK"])`, `rank = ...`,
    `global_rank = ...`) in a file that never reads RANK. A spawned worker's
    index, a value computed from the node rank, or a group whose store is a
    local file (`init_method="file://..."`: one machine) is not flagged. Asked for
    by issue 41's sample (a two-node forum repro, a course script, a notebook).
    A warning: the script may only ever run on one node.
    """

    id = "rank-from-local-rank"
    message = "init_process_group is given the local rank as the global rank: on a second node two processes claim each rank"
    fix = 'dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))'
    in_tests = False  # a test picks its devices and files for one machine on purpose
    needles = ("init_process_group", "LOCAL_RANK")

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
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        torch.cuda.set_device(args.local_rank)
        dist.init_process_group("nccl", init_method="env://", world_size=args.world_size,
                                rank=args.local_rank)  # flagged
        ''',
        '''
        import os
        import torch

        def init_dist_pytorch(args, backend="nccl"):
            args.rank = int(os.environ["LOCAL_RANK"])  # flagged
            torch.cuda.set_device(args.rank % torch.cuda.device_count())
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        inits = list(file.calls_to("init_process_group", TORCH))
        if not any(keyword(call, "rank") is not None for call in inits):
            yield from self._stored_as_rank(file)
        for call in inits:
            value = keyword(call, "rank")
            if value is None:
                continue
            init = constant(keyword(call, "init_method", 1), str)
            if init is not None and init.startswith("file://"):
                continue  # a FileStore on a local path: one machine
            kind, how = rank_kind(file, value)
            if kind == "local":
                yield Hit(value, message=f"init_process_group's rank comes from the local rank ({how}): on a second "
                          "node two processes claim each rank and the rendezvous hangs")

    @staticmethod
    def _stored_as_rank(file: FileModel) -> Iterator[Hit]:
        """`args.rank = int(os.environ["LOCAL_RANK"])`: the local rank kept as the global one."""
        if any(constant(node, str) in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK") for node in ast.walk(file.tree)):
            return  # the file reads the global rank too: it knows the two apart
        for node in ast.walk(file.tree):
            if type(node) is not ast.Assign or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if type(target) not in (ast.Name, ast.Attribute) or terminal_name(target) not in GLOBAL_NAMES:
                continue
            if any(constant(sub, str) == "LOCAL_RANK" for sub in ast.walk(node.value)):
                yield Hit(node, message=f"{ast.unparse(target)} is set from LOCAL_RANK: on a second node its processes "
                          "take ranks 0..N-1 again, two processes hold each rank and the rendezvous hangs",
                          fix=f'{ast.unparse(target)} = int(os.environ["RANK"])  # LOCAL_RANK picks the GPU')
