from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, source
from gpudoctor.linter.model import FileModel, keyword
from gpudoctor.linter.rule import Hit, Rule

# Tensor methods that hand back the tensor they are called on when nothing needs changing (`.cuda()` of
# a tensor on that GPU already, `.float()` of a float tensor): applied to a fresh tensor the result is
# still fresh; applied to a name it may be the name's own tensor, which the reduction then reaches.
MAYBE_SAME = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "long", "int", "contiguous",
                        "detach", "type", "view", "reshape", "squeeze", "unsqueeze", "flatten"})
# torch factories whose arguments are the tensor's values (not its shape: `torch.zeros(n)` holds nothing).
VALUE_FACTORIES = frozenset({"tensor", "as_tensor", "from_numpy", "stack", "cat", "concat", "full", "full_like",
                             "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor"})
# Methods that always make a new tensor.
ALWAYS_NEW = frozenset({"clone", "sum", "mean"})


class AllreduceResultDiscarded(Rule):
    """`dist.all_reduce(torch.tensor([running_loss]).cuda())`: all_reduce
    writes its result into the tensor it is given, and that tensor was made
    in the call itself, so nothing holds it afterwards. The reduced value is
    thrown away; the name it was built from (`running_loss`) keeps this
    rank's own value, and every rank logs or divides by its own shard's
    figure while the script reads as if the ranks agreed. Asked for by issue
    41's lint heldout16 (u013: the training and validation loss, correct
    count and sample count, each `dist.all_reduce(torch.tensor([x]).to(gpu),
    op=SUM)`, then read as `x / total` on every rank: six readers' entries).

    Flagged: the tensor given to `torch.distributed.all_reduce` (first
    argument or `tensor=`) is built there from a value of the program: a
    torch factory (`torch.tensor(...)`, `torch.as_tensor`, `torch.stack`,
    `torch.FloatTensor(...)`, ...) over a name, or `x.clone()`, or either
    followed by `.to(...)`, `.cuda()`, `.float()` and the like. Not flagged:
    a named tensor (`t = torch.tensor([x]); dist.all_reduce(t)` reads `t`
    after); `x.cuda()` or `x.to(dev)` of a name (they return `x` itself when
    it is there already); a factory of literals only
    (`dist.all_reduce(torch.zeros(1).cuda())`, the barrier idiom: there is
    no value to lose).

    A warning: nothing crashes or hangs; what is wrong is every figure read
    after the call, which the file shows but cannot weigh.
    """

    id = "allreduce-result-discarded"
    message = ("all_reduce is given a tensor made in the call: the reduced result is written into it and "
               "thrown away, and the value it was built from keeps this rank's own figure")
    fix = "t = torch.tensor([x], device=device); dist.all_reduce(t); x = t.item()"
    needles = ("all_reduce",)
    local_evidence = True

    VALID = (
        '''
        import torch
        import torch.distributed as dist

        def average(running_loss, device):
            t = torch.tensor([running_loss], device=device)
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
            return t.item() / dist.get_world_size()
        ''',
        '''
        import torch
        import torch.distributed as dist

        def sync():
            dist.all_reduce(torch.zeros(1).cuda())  # a barrier: no value to lose
        ''',
        '''
        import torch.distributed as dist

        def reduce_(loss):
            dist.all_reduce(loss.cuda())  # loss itself when it is on the GPU already
            return loss
        ''',
    )
    INVALID = (
        '''
        import torch
        import torch.distributed as dist

        def epoch_end(running_loss, total, gpu_id):
            dist.all_reduce(torch.tensor([running_loss]).to(gpu_id), op=dist.ReduceOp.SUM)  # flagged
            return running_loss / total
        ''',
        '''
        import torch.distributed as dist

        def reduce_(loss):
            dist.all_reduce(loss.detach().clone())  # flagged
            return loss
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls_to("all_reduce", TORCH):
            if file.call_name(call) not in ("torch.distributed.all_reduce", "torch.distributed.distributed_c10d"
                                            ".all_reduce"):
                continue
            tensor = keyword(call, "tensor", 0)
            if tensor is None or type(tensor) is not ast.Call:
                continue
            fresh = self._fresh(file, tensor)
            if fresh is None:
                continue
            values = sorted({n.id for n in ast.walk(fresh) if type(n) is ast.Name and n.id not in ("torch", "np")})
            held = f" ({', '.join(values)} keeps this rank's own value)" if values else ""
            yield Hit(call, message=f"all_reduce is given {source(tensor)}, a tensor made in the call: the reduced "
                      f"result is written into it and thrown away{held}",
                      fix=f"t = {source(tensor)}; dist.all_reduce(t); then read t (t.item(), t.tolist())")

    def _fresh(self, file: FileModel, expr: ast.expr) -> ast.expr | None:
        """The part of `expr` that makes a new tensor from a value of the program, or None."""
        while type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in MAYBE_SAME:
            expr = expr.func.value
        if type(expr) is not ast.Call:
            return None
        if type(expr.func) is ast.Attribute and expr.func.attr in ALWAYS_NEW:
            return expr
        qn = file.call_name(expr) or ""
        if qn.split(".", 1)[0] == "torch" and qn.rsplit(".", 1)[-1] in VALUE_FACTORIES:
            reads = [n for arg in [*expr.args, *(k.value for k in expr.keywords if k.arg != "device")]
                     for n in ast.walk(arg) if type(n) in (ast.Name, ast.Attribute)]
            return expr if reads else None
        return None
