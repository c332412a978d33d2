from __future__ import annotations

import ast
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
    `torchrun`. Flagged: building a DataParallel, also where the file builds
    a DistributedDataParallel on another path: a run started without a
    launcher takes the DataParallel path and is the slow one (issue 41's
    samples: readers flagged three of four such fallbacks); and a wrapper
    taken apart at once (`nn.DataParallel(model).module` is the bare model:
    nothing runs in parallel at all). Not flagged: `isinstance(model,
    nn.DataParallel)` checks, code under `if False:`. Not run on test files.
    """

    id = "dataparallel"
    in_tests = False  # tests build this shape on purpose
    message = "nn.DataParallel: one process drives every GPU; DistributedDataParallel is faster"
    fix = "model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])  # torchrun --nproc-per-node=N"
    needles = ("DataParallel",)

    VALID = (
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
        '''
        import torch.nn as nn

        if args.distributed:
            model = nn.parallel.DistributedDataParallel(model.cuda(gpu), device_ids=[gpu])
        else:
            model = nn.DataParallel(model).cuda()  # flagged: the path of a run without a launcher
        ''',
        '''
        import torch.nn as nn

        model = nn.DataParallel(model).module  # flagged: taken apart at once, nothing runs in parallel
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        # (torch's, apex's, DeepSpeed's): DataParallel is then the path of a run started without a launcher
        fallback = "DistributedDataParallel" in file.text
        for call in file.calls_to("DataParallel", TORCH):
            if self._dead(file, call):
                continue
            up = file.parent.get(call)
            if type(up) is ast.Attribute and up.attr == "module":
                yield Hit(call, message="nn.DataParallel taken apart at once: `.module` of a new wrapper is the "
                          "bare model, so one GPU does all the work; keep the wrapper, or better, use "
                          "DistributedDataParallel")
            elif fallback:
                yield Hit(call, message=self.message + ": the file builds DistributedDataParallel on another "
                          "path, and a run started without a launcher takes this one")
            else:
                yield Hit(call)

    @staticmethod
    def _dead(file: FileModel, node: ast.AST) -> bool:
        """Under `if False:` (or `if 0:`): code kept for reference, never run."""
        child = node
        for anc in file.ancestors(node):
            if type(anc) is ast.If and child in anc.body and type(anc.test) is ast.Constant and not anc.test.value:
                return True
            child = anc
        return False
