from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.project import Query, names_device_per_rank
from gpudoctor.linter.rule import Hit, Rule

# Ways to bind a process to its GPU.
BINDERS = {"set_device", "set_device_index", "set_device_idx", "set_default_device"}


class NcclNoSetDevice(Rule):
    """An NCCL process group without `torch.cuda.set_device(local_rank)`:
    every rank's current device stays cuda:0, so barriers, `.cuda()` calls
    and NCCL's own buffers land on the first GPU ("Duplicate GPU detected",
    out of memory on GPU 0, or a hang).

    Call `torch.cuda.set_device(local_rank)` before `init_process_group`, or
    pass `device_id=`. Not flagged when the file binds a device another way
    (`torch.cuda.device(...)`, `torch.accelerator.set_device_index`,
    `dist.barrier(device_ids=[rank])`, setting `CUDA_VISIBLE_DEVICES` per
    process, or naming each rank's GPU wherever it puts a tensor:
    `torch.device("cuda", rank)`, `f"cuda:{local_rank}"`), nor, when a folder is
    linted, when a module of the same program does (the training script that
    imports this file's `setup()`, or a module this file imports).

    Flagged only where the file itself puts work on the current device (`.cuda()`,
    `"cuda"`, `"cuda:0"`): a file that creates the group and places nothing on a GPU
    leaves the choice to code that is not in it. On the lint sample (dev, dev2) the
    rule fired 14 times on such files, every time wrongly, and both right
    diagnostics had a `.cuda()` or a plain "cuda" beside the group.

    A `dist.barrier()` with no `device_ids` counts as such work: NCCL runs it on
    a GPU it guesses for the rank ("devices used by this process are currently
    unknown"), and a wrong guess hangs the job. Asked for by issue 41's dev4 (a
    cluster connectivity test: an NCCL group, a barrier, nothing else).
    """

    id = "nccl-no-set-device"
    message = "NCCL process group initialised but torch.cuda.set_device() is never called: every rank uses cuda:0"
    fix = 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))  # before init_process_group'
    needles = ("nccl",)

    def relevant(self, text: str) -> bool:
        # An NCCL group the file creates; a binding in the text settles it without the tree.
        return ("nccl" in text or "NCCL" in text) and "init_process_group" in text and "CUDA_VISIBLE_DEVICES" not in text

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")  # the device is chosen by code not in this file
        train()
        ''',
        '''
        import os
        import torch
        import torch.distributed as dist

        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        dist.init_process_group("nccl")
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group(backend="gloo")
        ''',
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
        ''',
        '''
        import torch.distributed as dist

        def check_nccl(rank, world_size, url):
            dist.init_process_group("nccl", init_method=url, rank=rank, world_size=world_size)
            dist.barrier(device_ids=[rank])
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")  # flagged
        model = Net().cuda()
        ''',
        '''
        import torch
        from torch.distributed import init_process_group

        def setup(rank, world_size):
            backend = "nccl" if torch.cuda.is_available() else "gloo"
            init_process_group(backend, rank=rank, world_size=world_size)  # flagged
            return torch.zeros(1, device="cuda")
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        inits = [c for c in file.calls_to("init_process_group", TORCH) if self._nccl(file, c)]
        if not inits or "CUDA_VISIBLE_DEVICES" in file.text or names_device_per_rank(file.text):
            return  # the program names each rank's GPU itself
        for call in file.calls:
            name = terminal_name(call.func)
            if name in BINDERS or (name == "device" and file.qualname(call.func) == "torch.cuda.device"):
                return
            # `dist.barrier(device_ids=[rank])`: the program names each rank's GPU where it communicates
            if name == "barrier" and keyword(call, "device_ids") is not None:
                return
        barrier = None
        if not self._uses_current_device(file):
            barrier = next((c for c in file.calls if terminal_name(c.func) == "barrier"
                            and (file.qualname(c.func) or "").startswith("torch.distributed.")), None)
            if barrier is None:
                return  # nothing here lands on a GPU: the device is chosen where the work is
        for call in inits:
            # The script that imports this file (or a module it imports) may bind the device.
            if barrier is None:
                yield Hit(call, query=Query("no-device-binding"))
            else:
                yield Hit(call, query=Query("no-device-binding"),
                          message=f"NCCL process group initialised but torch.cuda.set_device() is never called: the "
                          f"barrier on line {barrier.lineno} runs on a GPU NCCL guesses for each rank, and a wrong "
                          "guess hangs it")

    @staticmethod
    def _uses_current_device(file: FileModel) -> bool:
        """The file puts something on the current GPU, or on cuda:0 on every rank:
        `.cuda()` with no index, or the device string "cuda" / "cuda:0"."""
        for node in ast.walk(file.tree):
            if type(node) is ast.Constant and node.value in ("cuda", "cuda:0"):
                return True
            if type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "cuda":
                if not node.args and not node.keywords:
                    return True
        return False

    @staticmethod
    def _nccl(file: FileModel, call: ast.Call) -> bool:
        if keyword(call, "device_id") is not None:
            return False
        backend = keyword(call, "backend", 0)
        if backend is None:
            return False
        for origin in file.origins(backend):
            value = constant(origin, str)
            if value is not None and "nccl" in value.lower():
                return True
            if type(origin) is ast.Attribute and origin.attr == "NCCL":  # dist.Backend.NCCL
                return True
        return False
