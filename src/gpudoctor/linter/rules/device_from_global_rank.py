from __future__ import annotations

from collections.abc import Iterator

from gpudoctor.linter.idioms import rank_kind
from gpudoctor.linter.model import FileModel, terminal_name
from gpudoctor.linter.rule import Hit, Rule

SETTERS = {"set_device", "set_device_index"}


class DeviceFromGlobalRank(Rule):
    """`torch.cuda.set_device(rank)` with the *global* rank (RANK,
    `dist.get_rank()`): right on one node, but on a second node rank 8 asks
    for GPU 8 of an 8-GPU machine ("invalid device ordinal"), or ranks of two
    nodes crowd the wrong GPUs.

    Flagged: `torch.cuda.set_device(...)` / `torch.accelerator.set_device_index(...)`
    whose value comes (in this file) from `RANK`, `SLURM_PROCID` or
    `dist.get_rank()`. `rank % torch.cuda.device_count()` and LOCAL_RANK are
    not flagged, nor a spawned worker's index. Asked for by issue 41's sample.
    A warning: the script may only ever run on one node.
    """

    id = "device-from-global-rank"
    message = "the GPU is chosen by the global rank: on a second node the index is past the GPUs there"
    fix = 'torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))'
    in_tests = False  # a test picks its devices and files for one machine on purpose
    needles = ("set_device",)

    VALID = (
        '''
        import os
        import torch

        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
        ''',
        '''
        import torch
        import torch.distributed as dist

        torch.cuda.set_device(dist.get_rank() % torch.cuda.device_count())
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        dist.init_process_group(backend="nccl")
        rank = dist.get_rank()
        torch.cuda.set_device(rank)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls:
            if terminal_name(call.func) not in SETTERS or not call.args:
                continue
            qualname = file.qualname(call.func) or ""
            if not qualname.startswith("torch."):
                continue
            kind, how = rank_kind(file, call.args[0])
            if kind == "global":
                yield Hit(call, message=f"the GPU is chosen by the global rank ({how}): on a second node the index "
                          "is past the GPUs there (invalid device ordinal)")
