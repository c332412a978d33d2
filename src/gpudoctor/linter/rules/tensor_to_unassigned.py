from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TENSOR_FACTORIES, is_tensor, source, wrapper_kind
from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import Hit, Rule

METHODS = ("to", "cuda", "cpu")
METHOD_CALL = re.compile(r"\.(?:to|cuda|cpu)\(")
# What may stand before the call on its line for it to be a statement.
TORCH_COLLECTIVE = re.compile(r"^torch\.distributed\.(?:all_reduce|reduce|broadcast|all_gather\w*|reduce_scatter\w*"
                              r"|all_to_all\w*|gather|scatter)$")
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
    calls written as a statement (`x.to(rank), y.to(rank)`) throws both away;
    there, a name given next to a DDP / DataParallel model (`ddp_model(x)`)
    counts as a tensor too. Not flagged: `x.cpu()` right after a torch.distributed
    collective on `x`, a known way to wait for it (the copy blocks until the GPU
    work is done: a barrier written as `all_reduce(x); x.cpu()`, issue 41's dev4).
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
        # Something the rule knows is a tensor: a torch factory's result, an
        # item of a loader (`is_tensor`), an input of a DDP model; then a line that starts with
        # `name.to(`, `batch[0].cuda(`, ...
        if not any(n in text for n in self.needles):  # what METHOD_CALL matches: the cheapest test first
            return False
        if "oader" not in text and not any(f in text for f in FACTORY_CALLS) and "DataParallel" not in text \
                and "DDP" not in text:
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
            if type(up) is ast.Expr and is_tensor(file, func.value) and not self._waits(file, up, func):
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
                            and (is_tensor(file, e.func.value) or self._wrapper_input(file, e.func.value, up)):
                        moved.append((source(e.func.value), source(e)))
                if moved:
                    yield Hit(
                        call,
                        message=(f"the result{'s' if len(moved) > 1 else ''} of {', '.join(c for _, c in moved)} "
                                 f"{'are' if len(moved) > 1 else 'is'} discarded (a tuple written as a statement): "
                                 "tensors are not moved in place"),
                        fix=f"{', '.join(t for t, _ in moved)} = {', '.join(c for _, c in moved)}",
                    )

    @staticmethod
    def _waits(file: FileModel, statement: ast.Expr, func: ast.Attribute) -> bool:
        """`x.cpu()` as the statement right after a torch.distributed collective on `x`:
        the copy waits for the collective (a synchronisation), its result is not wanted."""
        if func.attr != "cpu" or type(func.value) is not ast.Name:
            return False
        up = file.parent.get(statement)
        block: list[ast.stmt] = next((getattr(up, f) for f in ("body", "orelse", "finalbody")
                                      if statement in getattr(up, f, [])), [])
        at = block.index(statement)
        before = block[at - 1] if at > 0 else None
        if type(before) is not ast.Expr or type(before.value) is not ast.Call:
            return False
        collective = before.value
        return (TORCH_COLLECTIVE.match(file.qualname(collective.func) or "") is not None
                and any(type(a) is ast.Name and a.id == func.value.id for a in collective.args[:1]))

    @staticmethod
    def _wrapper_input(file: FileModel, value: ast.expr, line: ast.Tuple) -> bool:
        """`value` (a name) is given, after `line` in the same scope, as a
        positional input to a DDP / DataParallel model (`out = ddp_model(X)`):
        a tensor, in a tuple of moves whose results are dropped (issue 41's
        sample: personal DDP notes)."""
        if type(value) is not ast.Name:
            return False
        scope = file.scope(line)
        for call in file.calls:
            if call.lineno <= line.lineno or file.scope(call) is not scope:
                continue
            if any(type(a) is ast.Name and a.id == value.id for a in call.args) and \
                    type(call.func) is ast.Name and any(wrapper_kind(file, o) for o in file.origins(call.func)):
                return True
        return False
