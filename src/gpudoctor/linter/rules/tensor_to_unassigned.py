from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TENSOR_FACTORIES, is_tensor, source
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import Hit, Rule

METHODS = ("to", "cuda", "cpu")
METHOD_CALL = re.compile(r"\.(?:to|cuda|cpu)\(")
# What may stand before the call on its line for it to be a statement.
STATEMENT_START = re.compile(r"[ \t]*[\w.\[\]]+")
FACTORY_CALLS = tuple(f + "(" for f in sorted(TENSOR_FACTORIES))


class TensorToUnassigned(Rule):
    """`tensor.to(device)` (or `.cuda()`, `.cpu()`) as a statement of its own
    does nothing: tensors are not moved in place, the call returns a new
    tensor and the result is thrown away. The tensor stays where it was and
    a later op fails with "Expected all tensors to be on the same device".

    Modules *are* moved in place (`model.to(device)` is fine), so only values
    known to be tensors are flagged: built by a torch factory (`torch.zeros`,
    `torch.tensor`, ...) or unpacked from a DataLoader batch. A tuple of such
    calls written as a statement (`x.to(rank), y.to(rank)`) throws both away.
    """

    id = "tensor-to-unassigned"
    message = "the result of Tensor.to() is discarded: tensors are not moved in place"
    fix = "x = x.to(device)"
    needles = (".to(", ".cuda(", ".cpu(")

    VALID = (
        '''
        import torch

        model = torch.nn.Linear(4, 2)
        model.to("cuda")  # modules move in place
        x = torch.zeros(8, 4)
        x = x.to("cuda")
        ''',
        '''
        from torch.utils.data import DataLoader

        for batch in DataLoader(dataset):
            batch.to(device)  # could be an object whose .to() works in place
        ''',
    )
    INVALID = (
        '''
        import torch

        x = torch.randn(8, 4)
        x.to("cuda")  # flagged
        ''',
        '''
        from torch.utils.data import DataLoader

        loader = DataLoader(dataset, batch_size=32)
        for step, (inputs, labels) in enumerate(loader):
            inputs.to(device)  # flagged
            labels.cuda(non_blocking=True)  # flagged
            loss = model(inputs, labels)
        ''',
        '''
        from torch.utils.data import DataLoader

        for X, y in DataLoader(dataset, batch_size=32):
            X.to(rank), y.to(rank)  # flagged
            out = ddp_model(X)
        ''',
    )

    def relevant(self, text: str) -> bool:
        # Something the rule knows is a tensor: a torch factory's result, or
        # an item of a loader (`is_tensor`); then a line that starts with
        # `name.to(`, `batch[0].cuda(`, ...
        if not any(n in text for n in self.needles):  # what METHOD_CALL matches: the cheapest test first
            return False
        if "oader" not in text and not any(f in text for f in FACTORY_CALLS):
            return False
        for match in METHOD_CALL.finditer(text):
            start = text.rfind("\n", 0, match.start()) + 1
            if STATEMENT_START.fullmatch(text, start, match.start()):
                return True
        return False

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls:
            func = call.func
            if type(func) is not ast.Attribute or func.attr not in METHODS:
                continue
            up = file.parent.get(call)
            if type(up) is ast.Expr and is_tensor(file, func.value):
                target = source(func.value)
                yield Hit(
                    call,
                    message=f"the result of {target}.{func.attr}() is discarded: tensors are not moved in place",
                    fix=f"{target} = {source(call)}",
                )
            elif type(up) is ast.Tuple and type(file.parent.get(up)) is ast.Expr and up.elts[0] is call:
                # `x.to(rank), y.to(rank)` as a statement: one report for the line
                moved: list[tuple[str, str]] = []  # (the tensor, the call)
                for e in up.elts:
                    if type(e) is ast.Call and type(e.func) is ast.Attribute and e.func.attr in METHODS \
                            and is_tensor(file, e.func.value):
                        moved.append((source(e.func.value), source(e)))
                if moved:
                    yield Hit(
                        call,
                        message=f"the results of {source(up)} are discarded: tensors are not moved in place",
                        fix=f"{', '.join(t for t, _ in moved)} = {', '.join(c for _, c in moved)}",
                    )
