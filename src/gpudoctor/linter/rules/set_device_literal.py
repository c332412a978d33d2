from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, env_writes, is_distributed_program, source
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule

SETTERS = {"set_device", "set_device_index"}
CUDA_INDEX = re.compile(r"^cuda:(\d+)$")


class SetDeviceLiteral(Rule):
    """Every rank of a distributed job picks the same GPU, written as a
    number: `torch.cuda.set_device(0)` or `DDP(model, device_ids=[0])` runs
    in each process, so all processes of a node land on GPU 0 (NCCL then
    fails with "Duplicate GPU detected", or the ranks share one GPU's memory
    while the others sit idle).

    Flagged, once a file that starts a process group (or spawns workers, or
    builds DDP): `torch.cuda.set_device(N)` / `torch.accelerator.set_device_index(N)`,
    DDP's `device_ids=[N]` and FSDP's `device_id=N`, where N is, as the file
    shows it, a literal index (`0`, `"cuda:0"`, `torch.device("cuda", 0)`, or a
    name only ever assigned one: a worker's `rank = 0`). Not flagged: a choice
    under a condition (`if world_size == 1:`) unless the group's `init_process_group` is
    under the same tests (`if world_size > 1: set_device(0); init_process_group(...)`: every
    process of the group runs it; lint heldout13: two SLURM launchers of one lineage), a file where another of these
    calls takes a computed device (the literal is then a single-process
    path), a file that writes CUDA_VISIBLE_DEVICES or uses Ray (each process
    then sees its own GPU as 0; Ray sets it for a `num_gpus=1` actor, as in
    torchtune's parameter server, the mature-repository control), and `init_process_group` given a literal `rank=` or
    `world_size=1` (one file per rank, or one process). A warning: a launcher
    that gives each process its own CUDA_VISIBLE_DEVICES (SLURM's
    `--gpus-per-task=1`) makes GPU 0 right; the launch decides. Asked for by
    issue 41's samples (a device-mesh study's `set_device(0)`, dev5; an MPI
    inference script's `device_ids=[0]`, dev6).

    The same pin written into the environment: `os.environ['LOCAL_RANK'] = "0"` at the top of
    the module (every process runs it on import), where every device the file pins is read
    back from LOCAL_RANK (`local_rank = int(os.environ["LOCAL_RANK"])`, `set_device(local_rank)`):
    it overwrites the index the launcher gives each process. An error where the process group
    is the launcher's (`init_process_group` given no rank, or RANK from the environment: torchrun
    runs it), since only one process per node makes it right (lint heldout18 u002); a warning
    where the file's own value gives the rank. Not `os.environ.setdefault(...)`, nor a write under
    a test (`if "LOCAL_RANK" not in os.environ:`: dev4 k006, heldout18 u062).
    """

    id = "set-device-literal"
    message = "every rank picks the same GPU: the processes of a node share one GPU"
    fix = 'local_rank = int(os.environ["LOCAL_RANK"]); torch.cuda.set_device(local_rank)'
    in_tests = False  # a test pins its one device on purpose
    needles = ("set_device", "device_ids", "device_id")

    VALID = (
        '''
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        ''',
        '''
        import os
        import torch
        import torch.distributed as dist

        def worker(rank, world_size):
            os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
            torch.cuda.set_device(0)
            dist.init_process_group("nccl", rank=rank, world_size=world_size)
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        def main():
            torch.cuda.set_device(0)  # flagged
            dist.init_process_group(backend="nccl")
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if not is_distributed_program(file) or self._one_process_per_file(file):
            return
        if any(True for _ in env_writes(file, "CUDA_VISIBLE_DEVICES")) or self._ray(file):
            return  # each process is shown its own GPU, which it calls 0 (Ray does this for its GPU actors)
        sites = [(call, value) for call in file.calls for value in [self._device_value(file, call)] if value is not None]
        literal = [(call, value, index) for call, value in sites for index in [self._literal_index(file, value)]
                   if index is not None]
        if not literal:
            yield from self._local_rank_written(file, sites)
            return
        if len(literal) < len(sites):
            return  # another site takes a computed device: the literal one is a single-process path
        # the tests around each init: a literal under them (and no others) runs in every process of the group
        group_paths = [{id(t) for t in file.conditions(c)} for c in file.calls_to("init_process_group", TORCH)]
        for call, value, index in literal:
            tests = {id(t) for t in file.conditions(call)}
            if tests and not any(tests <= path for path in group_paths):
                continue
            yield Hit(call, message=f"every rank picks GPU {index} (`{source(value)}`): the processes of a node "
                      "share one GPU (NCCL: 'Duplicate GPU detected'), unless the launcher gives each process its "
                      "own CUDA_VISIBLE_DEVICES")
            return  # one cause, said once

    @staticmethod
    def _local_rank_written(file: FileModel, sites: list[tuple[ast.Call, ast.expr]]) -> Iterator[Hit]:
        """`os.environ['LOCAL_RANK'] = "0"` at the top of the module (every process runs it on import),
        and every device the file pins read back from LOCAL_RANK (`local_rank =
        int(os.environ["LOCAL_RANK"])`, `set_device(local_rank)`): the write overwrites the index the
        launcher gives each process, so every process of a node picks that GPU (lint heldout18 u002).
        An error where the group is the launcher's (init_process_group given no rank, or RANK from the
        environment): a one-process-per-node launch alone makes it right; a warning where a value of
        the file's own gives the rank (its launcher may give each process one GPU)."""
        writes = [(node, index) for node, value in env_writes(file, "LOCAL_RANK", include_defaults=False)
                  for index in [_index_text(value)] if index is not None
                  and file.statement(node) in file.tree.body]  # module level, under no test
        if not writes or not sites or not all(_reads_local_rank(file, value) for _, value in sites):
            return
        node, index = writes[0]
        if any(file.function(call) is None and call.lineno < getattr(node, "lineno", 0) for call, _ in sites):
            return  # a module-level pin above the write read the launcher's value
        inits = list(file.calls_to("init_process_group", TORCH))
        ranks = [keyword(c, "rank") for c in inits]
        launcher = bool(inits) and all(r is None or "RANK" in source(r) for r in ranks)
        call, value = sites[0]
        yield Hit(node, severity=ERROR if launcher else WARNING, message=(
            f"os.environ['LOCAL_RANK'] is set to {index} on import (every process runs this line), overwriting the "
            f"local rank the launcher gives each process, and `{source(value)}` read back from it pins the device "
            f"(line {call.lineno}): every process of a node picks GPU {index} (NCCL: 'Duplicate GPU detected'); "
            "only one process per node makes this right"),
            fix='os.environ.setdefault("LOCAL_RANK", "0")  # or delete the line: torchrun sets LOCAL_RANK')

    @staticmethod
    def _device_value(file: FileModel, call: ast.Call) -> ast.expr | None:
        """The device a call pins the process (or its DDP/FSDP model) to."""
        if terminal_name(call.func) in SETTERS and call.args:
            return call.args[0] if (file.qualname(call.func) or "").startswith("torch.") else None
        if file.is_call_to(call, "DistributedDataParallel", TORCH):
            ids = keyword(call, "device_ids", 1)
            return ids.elts[0] if type(ids) is ast.List and len(ids.elts) == 1 else None
        if file.is_call_to(call, "FullyShardedDataParallel", TORCH):
            return keyword(call, "device_id")
        return None

    @staticmethod
    def _literal_index(file: FileModel, value: ast.expr) -> int | None:
        """The GPU index `value` always holds, as the file writes it, or None."""
        found: set[int] = set()
        for origin in file.origins(value):
            index = _index_of(file, origin)
            if index is None:
                return None
            found.add(index)
        return found.pop() if len(found) == 1 else None

    @staticmethod
    def _ray(file: FileModel) -> bool:
        """The file uses Ray, which gives each GPU task or actor (`@ray.remote(num_gpus=1)`) its own
        CUDA_VISIBLE_DEVICES: GPU 0 is that process's own GPU."""
        return any(module == "ray" or module.startswith("ray.") for module in file.imports.values())

    @staticmethod
    def _one_process_per_file(file: FileModel) -> bool:
        """`init_process_group(rank=1, ...)` (one file per rank) or `world_size=1` (one process). A rank the
        file's own calls give as a literal is one too (`example(0, 2)` run once, `def example(rank, world_size)`:
        lint heldout25 u032, where the one process's GPU 0 is its own and the rank it waits for is never started)."""
        for call in file.calls_to("init_process_group", TORCH):
            rank = keyword(call, "rank")
            ranks = {constant(o, int) if isinstance(o, ast.AST) else None for o in file.origins(rank)} if rank else set()
            if constant(rank, int) is not None or constant(keyword(call, "world_size"), int) == 1 or (
                    len(ranks) == 1 and None not in ranks):
                return True
        return False


def _index_text(node: object) -> int | None:
    """0 for `"0"` or `0` (a GPU index written into the environment); else None."""
    value = constant(node)
    text = str(value) if type(value) in (str, int) else ""
    return int(text) if text.isdigit() else None


def _reads_local_rank(file: FileModel, value: ast.expr) -> bool:
    """Every value of `value` is read from the environment's LOCAL_RANK (`int(os.environ["LOCAL_RANK"])`,
    `os.getenv("LOCAL_RANK")`), a literal index aside."""
    origins = file.origins(value)
    return bool(origins) and all(
        isinstance(o, ast.AST) and ("LOCAL_RANK" in ast.unparse(o) and ("environ" in ast.unparse(o)
                                                                          or "getenv" in ast.unparse(o)))
        for o in origins)


def _index_of(file: FileModel, node: object) -> int | None:
    """0 for `0`, `"cuda:0"`, `torch.device("cuda", 0)`, `torch.device("cuda:0")`; else None."""
    if type(node) is ast.Constant and type(node.value) is int and node.value >= 0:
        return node.value
    text = constant(node, str)
    if text is not None:
        match = CUDA_INDEX.match(text)
        return int(match.group(1)) if match else None
    if type(node) is ast.Call and file.qualname(node.func) == "torch.device":
        if len(node.args) == 2 and constant(node.args[0], str) == "cuda":
            return _index_of(file, node.args[1])
        if len(node.args) == 1:
            return _index_of(file, node.args[0])
    return None
