from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, env_writes, port_pick, source
from gpudoctor.linter.model import Binding, FileModel, Param, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

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
    error in a spawned function (several processes certainly run it), and where
    the set-up writes a world size above 1 as a literal (`world_size=4`,
    `os.environ["WORLD_SIZE"] = "4"`): copies of it pick ports of their own,
    and no other program can know the one picked here (issue 41's heldout4), and
    where every init's world size is `torch.cuda.device_count()` and its rank is
    each process's own, not a literal (lint heldout20 u042: one process per GPU,
    so any machine with two GPUs or more hangs); a
    warning elsewhere (right when one process only runs it: a world size of 1). Not flagged: a
    pick handed from one rank to all (`comm.bcast(_find_free_port(), root=0)`, as
    openai/improved-diffusion does: seen on the mature-repository control; the
    heldout4 case is that code with the bcast taken out), a
    pick under a test (`if rank == 0:`), `setdefault` (a launcher's port wins),
    a group of world size 1, the parent's pick before `mp.spawn`, also when the
    spawned function writes it from its own parameter (`def main_worker(rank,
    world_size, master_addr, master_port)`: mp.spawn handed every process the
    same pick; issue 41's dev7). Asked for by
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
            pick = port_pick(file, value)
            if pick is None or any(file.is_rank_test(t) for t in file.conditions(node)):
                continue
            func = file.function(node)
            inits = [c for c in file.calls_to("init_process_group", TORCH) if file.function(c) is func]
            if any(self._single(file, c) for c in inits):
                continue
            gpus = self._gpu_count(file, inits) if inits else None
            if func is not None and file.spawned(func):
                if _handed_down(file, value, func):
                    continue  # `def main_worker(rank, ..., master_port)`: the parent picked it once (dev7 u012)
                yield Hit(node, message=f"MASTER_PORT is set from `{source(pick)}` in the function mp.spawn starts: "
                          "each process picks its own port and the ranks never meet at one address")
            elif inits and self._size(file, func, inits) is not None:
                # More than one process by the file's own word: copies of this set-up each pick
                # their own port, and no other program can know the one this process picked
                # (issue 41's heldout4: WORLD_SIZE "4" beside a socket bound to port 0).
                yield Hit(node, message=f"MASTER_PORT is set from `{source(pick)}` beside init_process_group, with "
                          f"a world size of {self._size(file, func, inits)}: every process that runs this set-up "
                          "picks its own port, and no other process can know the one picked here: the ranks never "
                          "meet at one address")
            elif gpus is not None:
                # one process per GPU by the file's own word, each with its own rank (lint heldout20 u042:
                # `main(torch.cuda.device_count(), config)`, `rank=config["local_rank"]`): on a machine with
                # two GPUs or more, each picks its own port
                yield Hit(node, message=f"MASTER_PORT is set from `{source(pick)}` beside init_process_group, whose "
                          f"world size is the GPU count (`{source(gpus)}`, line {gpus.lineno}) "
                          "and whose rank each process passes its own: with two GPUs or more, every process "
                          "picks its own port and the ranks never meet at one address (only a one-GPU run, "
                          "with no distribution, gets through)")
            elif inits:
                yield Hit(node, severity=WARNING,
                          message=f"MASTER_PORT is set from `{source(pick)}` beside init_process_group: every "
                          "process that runs this set-up picks its own port, and the ranks never meet (right "
                          "only if one process runs it: a world size of 1)")

    @staticmethod
    def _single(file: FileModel, init: ast.Call) -> bool:
        size = keyword(init, "world_size", 3)
        return size is not None and any(constant(o, int) == 1 for o in file.origins(size) if isinstance(o, ast.AST))

    @staticmethod
    def _gpu_count(file: FileModel, inits: list[ast.Call]) -> ast.Call | None:
        """The `torch.cuda.device_count()` every init's world size is, where no init's rank is a literal
        (each process passes its own: several run this set-up); None elsewhere (`rank=0` beside the GPU
        count: one process claims the only rank it names, heldout3 m065, a warning as before)."""
        counts: list[ast.Call] = []
        for init in inits:
            size, rank = keyword(init, "world_size", 3), keyword(init, "rank", 4)
            if size is None or rank is None:
                return None
            origins = file.origins(size)
            if not origins or not all(type(o) is ast.Call and terminal_name(o.func) == "device_count" for o in origins):
                return None
            if any(isinstance(o, ast.AST) and constant(o, int) is not None for o in file.origins(rank)):
                return None
            counts += [o for o in origins if type(o) is ast.Call]
        return counts[0] if counts else None

    @staticmethod
    def _size(file: FileModel, func: ast.AST | None, inits: list[ast.Call]) -> int | None:
        """The world size above 1 that the set-up writes as a literal: init_process_group's
        `world_size=4`, or `os.environ["WORLD_SIZE"] = "4"` in the same function, run
        under no test (but a set-up helper's `if dist.is_initialized(): return`, which
        every process passes once)."""
        found: set[object] = set()
        for init in inits:
            size = keyword(init, "world_size", 3)
            if size is not None:
                found.update(constant(o) if isinstance(o, ast.AST) else None for o in file.origins(size))
        if not found:
            for node, value in env_writes(file, "WORLD_SIZE", include_defaults=False):
                tests = [t for t in file.conditions(node) if "is_initialized" not in ast.unparse(t)]
                if file.function(node) is func and not tests and value is not None:
                    found.update(constant(o) if isinstance(o, ast.AST) else None for o in file.origins(value))
        if len(found) != 1:
            return None
        literal = found.pop()
        text = str(literal).strip() if isinstance(literal, (int, str)) and not isinstance(literal, bool) else ""
        return int(text) if text.isdigit() and int(text) > 1 else None


def _handed_down(file: FileModel, value: ast.expr | None, func: ast.AST) -> bool:
    """The port the spawned function writes is one of its own parameters (`def
    main_worker(rank, world_size, opts, master_addr, master_port)`, through `port =
    master_port` too): the parent picked it once and mp.spawn handed the same value to
    every process (dev7 u012, CVML-Detection/DETR-pytorch)."""
    names = [n for n in ast.walk(value) if type(n) is ast.Name] if value is not None else []
    if not names:
        return False
    for name in names:
        found = file.lookup(name) or []
        if not found or not all(isinstance(b, Param) and b.function is func or
                                isinstance(b, Binding) and b.kind == "value" and not b.path
                                and _handed_down(file, b.value, func) for b in found):  # type: ignore[arg-type]
            return False
    return True
