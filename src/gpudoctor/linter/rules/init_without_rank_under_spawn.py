from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH
from gpudoctor.linter.model import FileModel, constant, keyword
from gpudoctor.linter.rule import ERROR, Hit, Rule


class InitWithoutRankUnderSpawn(Rule):
    """`init_process_group("nccl")` with no `rank=` in the function
    `mp.spawn` starts, where nothing sets `RANK`: `mp.spawn` passes each
    process its index as the first argument and sets no environment
    variable, so the default `env://` rendezvous raises "environment variable
    RANK expected, but not set" in every process (`tcp://` and `file://`
    raise for the missing rank too). Started under torchrun instead, every
    spawned child inherits the one RANK of its parent and they all claim it.

    Pass the index: `dist.init_process_group("nccl", rank=rank,
    world_size=world_size)`, or set `os.environ["RANK"] = str(rank)` first.

    Flagged where the file writes no `RANK` and passes nothing that could
    carry it (`**kwargs`, an `init_method` that is not a literal, a literal
    URL with `rank=` in it), also in a set-up helper only the spawned
    function calls (`def setup(): dist.init_process_group(backend="nccl")`,
    called first thing in the worker: issue 41's dev7). Not the `mpi` backend, which takes the rank from
    MPI (issue 41's heldout4 has one: a different mistake). Asked for by issue 41's heldout4 (a worker that
    only calls `init_process_group("nccl")`, spawned on two processes).
    """

    id = "init-without-rank-under-spawn"
    severity = ERROR
    message = "init_process_group gets no rank in a function mp.spawn starts, and nothing sets RANK: it raises"
    fix = 'dist.init_process_group("nccl", rank=rank, world_size=world_size)  # rank: mp.spawn\'s first argument'
    needles = ("spawn",)

    def relevant(self, text: str) -> bool:
        # a RANK the file writes (or reads) itself settles it without the tree
        return "spawn" in text and "init_process_group" in text and "RANK\"" not in text and "RANK'" not in text

    VALID = (
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            dist.init_process_group("nccl", rank=rank, world_size=world_size)

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
        '''
        import os
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            os.environ["RANK"] = str(rank)
            os.environ["WORLD_SIZE"] = str(world_size)
            dist.init_process_group("nccl")

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank):
            dist.init_process_group("nccl")  # flagged

        if __name__ == "__main__":
            mp.spawn(worker, nprocs=2, args=())
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls_to("init_process_group", TORCH):
            func = file.function(call)
            worker = _spawned_caller(file, func, set()) if func is not None else None
            if worker is None:
                continue
            if keyword(call, "rank", 4) is not None or keyword(call, "store", 5) is not None \
                    or any(k.arg is None for k in call.keywords):
                continue
            backend = keyword(call, "backend", 0)
            if backend is not None and any(str(constant(o, str)).lower() == "mpi" for o in file.origins(backend)):
                continue  # MPI gives the rank itself (spawned processes are each a world of one: another mistake)
            method = keyword(call, "init_method", 1)
            if method is not None:
                url = constant(method, str)
                if url is None or "rank=" in url:
                    continue  # a URL built at run time may carry the rank
            name = getattr(worker, "name", "the worker")
            how = "the function mp.spawn starts" if worker is func else \
                f"the function mp.spawn starts (through `{getattr(func, 'name', 'a helper')}()`)"
            yield Hit(call, message=f"init_process_group gets no rank in `{name}`, {how}, and "
                      "nothing in this file sets RANK: the env:// rendezvous raises 'environment variable RANK "
                      "expected, but not set' in every process")


def _spawned_caller(file: FileModel, func: ast.AST, seen: set) -> ast.AST | None:
    """The function mp.spawn starts that runs `func`: `func` itself, or the spawned
    function every call of `func` in the file is in (through helpers), where `func` is
    not passed on anywhere else; None otherwise."""
    if file.spawned(func):
        return func
    if func in seen or file.references.get(func):
        return None
    seen.add(func)
    sites = file.call_sites.get(func, [])
    callers = {file.function(site) for site, _ in sites}
    if not sites or len(callers) != 1 or None in callers:
        return None
    caller = callers.pop()
    return _spawned_caller(file, caller, seen) if caller is not None else None
