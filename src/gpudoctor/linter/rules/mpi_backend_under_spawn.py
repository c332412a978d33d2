from __future__ import annotations

from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH
from gpudoctor.linter.model import FileModel, constant, keyword
from gpudoctor.linter.rule import ERROR, Hit, Rule


class MpiBackendUnderSpawn(Rule):
    """`init_process_group(backend="mpi")` in the function `mp.spawn`
    starts: the MPI backend takes each process's rank and the world's size
    from the MPI launcher (`mpirun -np 4 python train.py`), and processes
    made by `mp.spawn` are not MPI processes, so each one is a world of one
    (`get_world_size()` is 1 in every process) and they never communicate.

    Start the processes with `mpirun` and drop `mp.spawn`, or keep `mp.spawn`
    with the `gloo` or `nccl` backend and pass each process its rank. Asked
    for by issue 41's heldout4 (an Open MPI issue: world size 1 in four
    spawned processes).
    """

    id = "mpi-backend-under-spawn"
    severity = ERROR
    message = "backend='mpi' in a process mp.spawn started: MPI gives it a world of one, and the processes never meet"
    fix = 'mpirun -np 4 python train.py  # MPI starts the ranks; or mp.spawn with backend="gloo"/"nccl" and rank='
    needles = ("mpi",)

    VALID = (
        '''
        import torch.distributed as dist

        if __name__ == "__main__":
            dist.init_process_group(backend="mpi")  # run under mpirun
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def main(rank, world_size):
            dist.init_process_group(backend="mpi")  # flagged

        if __name__ == "__main__":
            mp.spawn(main, args=(4,), nprocs=4)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls_to("init_process_group", TORCH):
            backend = keyword(call, "backend", 0)
            func = file.function(call)
            if backend is None or func is None or not file.spawned(func):
                continue
            values = [constant(o, str) for o in file.origins(backend)]
            if values and all(isinstance(v, str) and v.lower() == "mpi" for v in values):
                yield Hit(call)
