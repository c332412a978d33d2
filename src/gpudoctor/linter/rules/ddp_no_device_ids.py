from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, binds_current_device, is_ddp_wrapper, nccl_group, on_current_device
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.project import Query
from gpudoctor.linter.rule import WARNING, Hit, Rule

# A name that holds a rank or a GPU index (0 on the first process).
RANKISH = re.compile(r"rank|gpu|device_id|local_id", re.IGNORECASE)


class DdpNoDeviceIds(Rule):
    """DistributedDataParallel built without `device_ids` around a module put
    on the process's current device (`model.cuda()`, `model.to("cuda")`),
    where nothing sets each process's current device: `.cuda()` then means
    cuda:0 in every process, so every rank's replica sits on the first GPU
    (NCCL's "Duplicate GPU detected", out of memory on GPU 0). On the torch
    of many help threads, DDP given no `device_ids` also spread the module
    over every visible GPU ("all tensors must be on devices[0]").

    Flagged: `DistributedDataParallel(model.cuda())` (or a name assigned
    `net.cuda()`, or moved by a bare `net.cuda()` before the wrap; mmcv's
    `MMDistributedDataParallel` too) with no `device_ids`, in a file that sets
    no current device (`torch.cuda.set_device`, `torch.cuda.device(...)`,
    `CUDA_VISIBLE_DEVICES`, `barrier(device_ids=...)`) and, when a folder is
    linted, in a program none of whose modules does. A file that creates its
    NCCL group itself is left to `nccl-no-set-device`, which says it at the
    group. A warning: the device may be set by code the file does not show (a
    launcher helper, mmcv's `init_dist`). Asked for by issue 41's heldout4
    and heldout5 (three mmdetection-style threads: `MMDistributedDataParallel(
    model.cuda())`, fixed by `device_ids=[local_rank]`).

    Also flagged: `device_ids=[gpu] if args.rank else None`, a rank or GPU
    index read as a truth value: it is 0, false, on the first process, whose
    DDP alone gets no `device_ids` (heldout4: deepspeech.pytorch's wrapper).
    """

    id = "ddp-no-device-ids"
    severity = WARNING
    message = ("DistributedDataParallel gets no device_ids and its module was put on the current device, which "
               "nothing sets per rank: every rank's replica sits on cuda:0")
    fix = "torch.cuda.set_device(local_rank); model = DistributedDataParallel(model.cuda(), device_ids=[local_rank])"
    needles = ("DistributedDataParallel", "DDP")

    def relevant(self, text: str) -> bool:
        return any(n in text for n in self.needles) and any(
            n in text for n in (".cuda()", "cuda\")", "cuda')", "device_ids"))

    VALID = (
        '''
        import os
        import torch
        from torch.nn.parallel import DistributedDataParallel as DDP

        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(local_rank)
        model = DDP(Net().cuda())  # .cuda() follows the device set above
        ''',
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model.cuda(), device_ids=[local_rank])
        ''',
        '''
        import torch

        model = torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.gpu] if args.gpu is not None else None)
        ''',
    )
    INVALID = (
        '''
        from mmcv.parallel import MMDistributedDataParallel

        model = MMDistributedDataParallel(model.cuda(), find_unused_parameters=True)  # flagged
        ''',
        '''
        import torch

        net = Net()
        net.cuda()
        net = torch.nn.parallel.DistributedDataParallel(net)  # flagged
        ''',
        '''
        import torch

        model = torch.nn.parallel.DistributedDataParallel(  # flagged
            model, device_ids=[args.gpu_rank] if args.rank else None)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if binds_current_device(file):
            return
        if any(nccl_group(file, c) for c in file.calls_to("init_process_group", TORCH)):
            return  # nccl-no-set-device says it where the group is made
        for call in file.calls:
            if not is_ddp_wrapper(file, call):
                continue
            falsy = self._none_on_rank_zero(call)
            if falsy is not None:
                yield Hit(call, message=f"device_ids is None when `{ast.unparse(falsy)}` is false, and a rank or GPU "
                          "index of 0 is false: rank 0's DDP gets no device_ids while the others name their GPU "
                          "(on older torch it then spreads over every visible GPU)",
                          fix=f"device_ids=[{ast.unparse(falsy)}] if {ast.unparse(falsy)} is not None else None")
                continue
            placed = on_current_device(file, call)
            if placed is None:
                continue
            yield Hit(call, query=Query("no-device-binding"),
                      message=f"{ast.unparse(call.func)}(...) gets no device_ids and the module it wraps was put on "
                      f"the current device (`{ast.unparse(placed)[:40]}`), which nothing in view sets per rank: "
                      "every rank's replica sits on cuda:0 (NCCL 'Duplicate GPU detected', or out of memory "
                      "there); on older torch DDP with no device_ids also spreads the module over every visible "
                      "GPU")

    @staticmethod
    def _none_on_rank_zero(call: ast.Call) -> ast.expr | None:
        """`device_ids=[gpu] if args.rank else None`: the rank (or GPU index) read
        as a truth value picks None for rank 0. The name tested, else None."""
        value = keyword(call, "device_ids", 1)
        if type(value) is not ast.IfExp or constant(value.orelse) is not None or type(value.orelse) is not ast.Constant:
            return None
        test = value.test
        if isinstance(test, (ast.Name, ast.Attribute)) and RANKISH.search(terminal_name(test)):
            return test
        return None
