from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.model import FileModel
from gpudoctor.linter.rule import Hit, Rule

DISTRIBUTED = "torch.distributed"
# The one-process-many-GPUs collectives, removed in torch 2.2 (pytorch/pytorch#114156).
MULTIGPU = {"all_reduce_multigpu", "all_gather_multigpu", "broadcast_multigpu", "reduce_multigpu",
            "reduce_scatter_multigpu"}
# torch.distributed.pipeline (Pipe), deprecated in 2.3 and removed in 2.4 (#121464, #127354).
PIPELINE = f"{DISTRIBUTED}.pipeline"


class RemovedDistributedApi(Rule):
    """A torch.distributed API that recent torch no longer has, still spelled
    by old tutorials and the code copied from them: the `*_multigpu`
    collectives (`all_reduce_multigpu`, `broadcast_multigpu`, ...; one
    process driving several GPUs, removed in torch 2.2) and
    `torch.distributed.pipeline` (`Pipe` from `pipeline.sync`, deprecated
    in 2.3 and removed in 2.4 in favour of `torch.distributed.pipelining`).
    On a current torch the import fails (ModuleNotFoundError) or the call
    does (AttributeError), on every rank.

    Flagged: an import of `torch.distributed.pipeline` or a module under
    it, and a `*_multigpu` function read from torch.distributed (also from
    a name spelled `dist` the file does not import). A warning: on the
    torch the code was written for, it still works.
    """

    id = "removed-distributed-api"
    message = "this torch.distributed API is gone from recent torch"
    fix = "one process per GPU with dist.all_reduce / dist.broadcast; torch.distributed.pipelining for pipelines"
    needles = ("_multigpu", "distributed.pipeline")

    VALID = (
        '''
        import torch.distributed as dist

        def sync(model):
            for p in model.parameters():
                dist.broadcast(p.data, src=0)
        ''',
        '''
        from torch.distributed.pipelining import pipeline, SplitPoint
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        def sync(model):
            dist.broadcast_multigpu(list(model.parameters()), src=0)  # flagged
        ''',
        '''
        from torch.distributed.pipeline.sync import Pipe  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for node in ast.walk(file.tree):
            if type(node) is ast.ImportFrom and node.level == 0 and self._pipeline(node.module or ""):
                yield self._pipeline_hit(node, node.module or "")
            elif type(node) is ast.Import:
                for alias in node.names:
                    if self._pipeline(alias.name):
                        yield self._pipeline_hit(node, alias.name)
                        break
            elif type(node) is ast.Attribute and node.attr in MULTIGPU and type(node.ctx) is ast.Load:
                if file.qualname(node.value) == DISTRIBUTED or (
                        type(node.value) is ast.Name and node.value.id == "dist" and "dist" not in file.imports):
                    yield self._multigpu_hit(node, node.attr)
            elif type(node) is ast.Name and node.id in MULTIGPU and type(node.ctx) is ast.Load:
                if file.qualname(node) == f"{DISTRIBUTED}.{node.id}":
                    yield self._multigpu_hit(node, node.id)

    @staticmethod
    def _pipeline(module: str) -> bool:
        return module == PIPELINE or module.startswith(PIPELINE + ".")

    @staticmethod
    def _pipeline_hit(node: ast.AST, module: str) -> Hit:
        return Hit(node, message=f"{module} was deprecated in torch 2.3 and removed in 2.4: on a current torch "
                   "this import fails (ModuleNotFoundError)",
                   fix="torch.distributed.pipelining (pipeline(), ScheduleGPipe) replaces Pipe")

    @staticmethod
    def _multigpu_hit(node: ast.AST, name: str) -> Hit:
        plain = name.removesuffix("_multigpu")
        return Hit(node, message=f"torch.distributed.{name} (one process driving several GPUs) was removed in "
                   "torch 2.2: on a current torch this is an AttributeError",
                   fix=f"one process per GPU: dist.{plain}(tensor, ...) in each")
