from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import source, wrapper_arguments
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import ERROR, Hit, Rule


class OutputDeviceList(Rule):
    """`output_device` takes one device, not a list: DistributedDataParallel
    and DataParallel gather outputs onto a single device.

    With DDP (one GPU per process) the usual form is `device_ids=[local_rank],
    output_device=local_rank`, or leaving `output_device` out (it defaults to
    `device_ids[0]`).
    """

    id = "output-device-list"
    severity = ERROR  # a certain crash or hang
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "output_device is given a list: it takes one device"
    fix = "DistributedDataParallel(model, device_ids=[local_rank], output_device=local_rank)"
    needles = ("DataParallel",)

    VALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
        ''',
        '''
        import torch.nn as nn

        model = nn.DataParallel(model, device_ids=[0, 1], output_device=0)
        ''',
    )
    INVALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[local_rank], output_device=[local_rank])  # flagged
        ''',
        '''
        import torch

        gpus = [0, 1]
        model = torch.nn.DataParallel(model, gpus, gpus)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for kind, value, origins in wrapper_arguments(file, "output_device", 2):
            lists = [o for o in origins if isinstance(o, (ast.List, ast.Tuple))]
            if origins and len(lists) == len(origins):
                first = lists[0].elts[0] if lists[0].elts else None
                one = source(first) if first is not None else "local_rank"
                yield Hit(
                    value,
                    message=f"{kind}(output_device={source(value)}): output_device takes one device, not a list",
                    fix=f"output_device={one}",
                )
