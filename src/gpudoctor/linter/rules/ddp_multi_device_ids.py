from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import wrapper_arguments
from gpudoctor.linter.model import FileModel, constant, terminal_name
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule


class DdpMultiDeviceIds(Rule):
    """DistributedDataParallel given more than one device in `device_ids`:
    one process driving several GPUs ("single-process multi-device" DDP) was
    removed, and current torch raises "device_ids can only be None or
    contain a single element".

    Flagged: DDP's `device_ids=` (or second positional argument) whose value,
    as the file shows it, is a list or tuple of two or more devices or a
    `range` over two or more (an error: the count is in the file); a `range`
    or `list(range(...))` whose bounds the file computes is a warning (it
    holds more than one device unless the bounds make it one). DataParallel,
    which takes several devices on purpose, is not flagged. Asked for by
    issue 41's samples (a forum repro with `device_ids=range(2)`, the old DDP
    example that gives each process several GPUs).
    """

    id = "ddp-multi-device-ids"
    severity = ERROR  # a certain crash or hang
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "DistributedDataParallel is given several devices: one process per GPU, device_ids=[local_rank]"
    fix = "DistributedDataParallel(model, device_ids=[local_rank])  # start one process per GPU (torchrun)"
    needles = ("device_ids", "DistributedDataParallel", "DDP")

    VALID = (
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
        ''',
        '''
        import torch

        model = torch.nn.DataParallel(model, device_ids=range(2))
        ''',
    )
    INVALID = (
        '''
        import torch

        net = torch.nn.parallel.DistributedDataParallel(net, device_ids=range(2))  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for kind, value, found in wrapper_arguments(file, "device_ids", 1):
            if kind != "DistributedDataParallel":
                continue
            origins = [o for o in found if isinstance(o, ast.AST)]
            counts = [self._count(o) for o in origins]
            if not origins or any(c is None for c in counts):
                continue
            if all(c == -1 or (c is not None and c > 1) for c in counts):
                certain = all(c is not None and c > 1 for c in counts)
                yield Hit(value, severity=ERROR if certain else WARNING,
                          message=f"DistributedDataParallel(device_ids={ast.unparse(value)[:40]}): "
                          + ("several devices for one process: current torch raises 'device_ids can only be None or "
                             "contain a single element'" if certain else
                             "a range of devices whose size this file computes: with more than one device, current "
                             "torch raises 'device_ids can only be None or contain a single element'"))

    @staticmethod
    def _count(node: ast.AST) -> int | None:
        """How many devices `node` lists: a number, -1 for a range whose size is computed,
        None when it is not a list of devices the rule can read."""
        if isinstance(node, (ast.List, ast.Tuple)):
            return None if any(type(e) is ast.Starred for e in node.elts) else len(node.elts)
        if type(node) is ast.Call and terminal_name(node.func) == "list" and len(node.args) == 1:
            node = node.args[0]
        if type(node) is ast.Call and terminal_name(node.func) == "range" and 1 <= len(node.args) <= 2:
            bounds = [b for b in (constant(a, int) for a in node.args) if b is not None]
            if len(bounds) != len(node.args):
                return -1
            start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
            return max(0, stop - start)
        return None
