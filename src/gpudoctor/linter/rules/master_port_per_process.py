from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, env_writes, source
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

# Calls that pick a port anew each time they run.
PICKS_PORT = re.compile(r"free_port|open_port|unused_port|available_port|random_port|getsockname|randint|randrange",
                        re.IGNORECASE)
# Calls that hand one process's value to every process (MPI's bcast, torch's broadcast_object_list).
SHARES = re.compile(r"bcast|broadcast|allgather|all_gather|scatter", re.IGNORECASE)


class MasterPortPerProcess(Rule):
    """`os.environ["MASTER_PORT"] = str(find_free_port())` in the code each
    rank runs: every process picks its own free port, so rank 0 listens on
    one port while the others knock on theirs, and the rendezvous waits until
    it times out. A free port is right only when it is picked once, before
    the processes start (in the parent, before `mp.spawn`), and handed down.

    Flagged: MASTER_PORT written from a port-picking call (`find_free_port()`,
    a socket's `getsockname()`, `random.randint`) in a function that also calls
    `init_process_group` (each process runs its own set-up), in the function
    `mp.spawn` starts, or at the top of a file that starts its group there. An
    error in a spawned function (several processes certainly run it); a
    warning elsewhere (right when one process only runs it). Not flagged: a
    pick handed from one rank to all (`comm.bcast(_find_free_port(), root=0)`, as
    openai/improved-diffusion does: seen on the mature-repository control; the
    heldout4 case is that code with the bcast taken out), a
    pick under a test (`if rank == 0:`), `setdefault` (a launcher's port wins),
    a group of world size 1, the parent's pick before `mp.spawn`. Asked for by
    issue 41's heldout3 and heldout4 (two set-up helpers that bind a socket to
    port 0 and export what they got).
    """

    id = "master-port-per-process"
    severity = ERROR
    message = "each process picks its own free MASTER_PORT: the ranks never meet at one address"
    fix = "pick the port once in the parent before mp.spawn (or let torchrun choose it: --rdzv-endpoint=host:0)"
    in_tests = False  # a test's single process may pick a free port on purpose
    needles = ("MASTER_PORT",)

    VALID = (
        '''
        import os
        import torch.multiprocessing as mp

        if __name__ == "__main__":
            os.environ["MASTER_PORT"] = str(find_free_port())  # once, in the parent
            mp.spawn(worker, args=(4,), nprocs=4)
        ''',
        '''
        import os
        import torch.distributed as dist

        def setup():
            os.environ["MASTER_PORT"] = str(find_free_port())
            dist.init_process_group("gloo", rank=0, world_size=1)
        ''',
    )
    INVALID = (
        '''
        import os
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            os.environ["MASTER_PORT"] = str(find_free_port())  # flagged
            dist.init_process_group("nccl", rank=rank, world_size=world_size)

        if __name__ == "__main__":
            mp.spawn(worker, args=(4,), nprocs=4)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for node, value in env_writes(file, "MASTER_PORT", include_defaults=False):
            pick = self._pick(file, value)
            if pick is None or any(file.is_rank_test(t) for t in file.conditions(node)):
                continue
            func = file.function(node)
            inits = [c for c in file.calls_to("init_process_group", TORCH) if file.function(c) is func]
            if any(self._single(file, c) for c in inits):
                continue
            if func is not None and file.spawned(func):
                yield Hit(node, message=f"MASTER_PORT is set from `{source(pick)}` in the function mp.spawn starts: "
                          "each process picks its own port and the ranks never meet at one address")
            elif inits:
                yield Hit(node, severity=WARNING,
                          message=f"MASTER_PORT is set from `{source(pick)}` beside init_process_group: every "
                          "process that runs this set-up picks its own port, and the ranks never meet (right "
                          "only if one process runs it)")

    @staticmethod
    def _pick(file: FileModel, value: ast.expr | None, depth: int = 0) -> ast.Call | None:
        """The port-picking call `value` comes from, followed through names."""
        if value is None or depth > 3:
            return None
        if any(type(sub) is ast.Call and SHARES.search(terminal_name(sub.func)) for sub in ast.walk(value)):
            return None  # `comm.bcast(_find_free_port(), root=0)`: rank 0's pick, handed to every rank
        for sub in ast.walk(value):
            if type(sub) is ast.Call and PICKS_PORT.search(terminal_name(sub.func)):
                return sub
            if type(sub) is ast.Name and type(sub.ctx) is ast.Load:
                for origin in file.origins(sub):
                    if isinstance(origin, ast.expr) and origin is not sub:
                        found = MasterPortPerProcess._pick(file, origin, depth + 1)
                        if found is not None:
                            return found
        return None

    @staticmethod
    def _single(file: FileModel, init: ast.Call) -> bool:
        size = keyword(init, "world_size", 3)
        return size is not None and any(constant(o, int) == 1 for o in file.origins(size) if isinstance(o, ast.AST))
