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
# Names a torch.distributed module no longer has -> the name that replaced it
# (FSDP's first auto-wrap policy, renamed when FSDP left beta; absent from
# torch 2.x's torch.distributed.fsdp.wrap).
RENAMED = {f"{DISTRIBUTED}.fsdp.wrap": {"default_auto_wrap_policy": "size_based_auto_wrap_policy"}}


class RemovedDistributedApi(Rule):
    """A torch.distributed API that recent torch no longer has, still spelled
    by old tutorials and the code copied from them: the `*_multigpu`
    collectives (`all_reduce_multigpu`, `broadcast_multigpu`, ...; one
    process driving several GPUs, removed in torch 2.2) and
    `torch.distributed.pipeline` (`Pipe` from `pipeline.sync`, deprecated
    in 2.3 and removed in 2.4 in favour of `torch.distributed.pipelining`),
    and names a module lost to a rename (FSDP's `default_auto_wrap_policy`,
    now `size_based_auto_wrap_policy`).
    On a current torch the import fails (ModuleNotFoundError) or the call
    does (AttributeError), on every rank.

    Flagged: an import of `torch.distributed.pipeline` or a module under
    it, a `*_multigpu` function read from torch.distributed (also from
    a name spelled `dist` the file does not import), and a renamed name
    imported or read from its module (issue 41's dev6: a notes file's FSDP
    snippet). A warning: on the
    torch the code was written for, it still works.
    """

    id = "removed-distributed-api"
    message = "this torch.distributed API is gone from recent torch"
    fix = "one process per GPU with dist.all_reduce / dist.broadcast; torch.distributed.pipelining for pipelines"
    needles = ("_multigpu", "distributed.pipeline", "default_auto_wrap_policy")

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
            elif type(node) is ast.ImportFrom and node.level == 0 and node.module in RENAMED:
                renamed = RENAMED[node.module]
                for alias in node.names:
                    if alias.name in renamed:
                        yield self._renamed_hit(node, node.module, alias.name, renamed[alias.name])
            elif type(node) is ast.Attribute and type(node.ctx) is ast.Load and \
                    node.attr in RENAMED.get(file.qualname(node.value) or "", {}):
                module = file.qualname(node.value) or ""
                yield self._renamed_hit(node, module, node.attr, RENAMED[module][node.attr])
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
    def _renamed_hit(node: ast.AST, module: str, name: str, now: str) -> Hit:
        return Hit(node, message=f"{module}.{name} is gone from recent torch (it was renamed {now}): on a current "
                   "torch this import fails (ImportError)",
                   fix=f"from {module} import {now}  # functools.partial({now}, min_num_params=...)")

    @staticmethod
    def _multigpu_hit(node: ast.AST, name: str) -> Hit:
        plain = name.removesuffix("_multigpu")
        return Hit(node, message=f"torch.distributed.{name} (one process driving several GPUs) was removed in "
                   "torch 2.2: on a current torch this is an AttributeError",
                   fix=f"one process per GPU: dist.{plain}(tensor, ...) in each")
