from __future__ import annotations

from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import Hit, Rule


class DataParallel(Rule):
    """`nn.DataParallel` runs one process with a thread per GPU: it copies
    the model to every GPU on every step, scatters each batch and gathers
    the outputs on GPU 0, so it is slower than DistributedDataParallel even
    on one machine and GPU 0 runs out of memory first.

    Use one process per GPU with DistributedDataParallel, started by
    `torchrun`. Only building a DataParallel is flagged, not
    `isinstance(model, nn.DataParallel)` checks, nor a file that also builds
    a DistributedDataParallel: there DataParallel is the fallback for a run
    without a launcher, chosen on purpose. Not run on test files.
    """

    id = "dataparallel"
    in_tests = False  # tests build this shape on purpose
    message = "nn.DataParallel: one process drives every GPU; DistributedDataParallel is faster"
    fix = "model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])  # torchrun --nproc-per-node=N"
    needles = ("DataParallel",)

    VALID = (
        '''
        import torch.nn as nn

        if args.distributed:
            model = nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
        else:
            model = nn.DataParallel(model).cuda()  # the fallback without a launcher
        ''',
        '''
        import os
        from torch.nn.parallel import DistributedDataParallel as DDP

        local_rank = int(os.environ["LOCAL_RANK"])
        model = DDP(model.to(local_rank), device_ids=[local_rank])
        ''',
        '''
        import torch.nn as nn

        def unwrap(model):
            return model.module if isinstance(model, nn.DataParallel) else model
        ''',
    )
    INVALID = (
        '''
        import torch.nn as nn

        model = nn.DataParallel(model)  # flagged
        ''',
        '''
        from torch.nn import DataParallel as DP

        model = DP(model, device_ids=[0, 1]).cuda()  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if "DistributedDataParallel" in file.text:  # (torch's, apex's, DeepSpeed's)
            return  # DataParallel is the program's fallback when it is not launched distributed
        for call in file.calls_to("DataParallel", TORCH):
            yield Hit(call)
