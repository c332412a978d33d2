from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, source
from gpudoctor.linter.model import FileModel, keyword
from gpudoctor.linter.rule import Hit, Rule


class EnvInitMethodWithAddress(Rule):
    """`init_process_group(init_method="env://10.0.0.1:29500")`: the `env://`
    rendezvous reads the address and port only from `MASTER_ADDR` and
    `MASTER_PORT` in the environment; the host and port written after
    `env://` are ignored. Where the environment does not hold them it raises
    for the missing variable, and where it does, the address the code names
    is not the one used.

    Write `tcp://host:port` to name the address in code (with `rank=` and
    `world_size=`), or set `MASTER_ADDR` / `MASTER_PORT` and pass `env://`.
    A warning (the environment may hold the same address). Asked for by
    issue 41's dev3 (`init_method="env://%s:%s" % (addr, port)`).
    """

    id = "env-init-method-with-address"
    message = "init_method env:// with an address after it: env:// ignores it and reads MASTER_ADDR / MASTER_PORT"
    fix = 'init_method=f"tcp://{addr}:{port}"  # or os.environ["MASTER_ADDR"] = addr; init_method="env://"'
    needles = ("env://",)

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl", init_method="env://")
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl", init_method=f"tcp://{addr}:{port}", rank=rank, world_size=world_size)
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl", init_method="env://%s:%s" % (addr, port), rank=rank, world_size=2)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for call in file.calls_to("init_process_group", TORCH):
            method = keyword(call, "init_method", 1)
            if method is not None and self._env_with_address(method):
                yield Hit(method, message=f"init_method `{source(method)}`: env:// ignores the address after it and "
                          "reads MASTER_ADDR / MASTER_PORT from the environment (it raises where they are unset)")

    @staticmethod
    def _env_with_address(node: ast.expr) -> bool:
        """"env://" followed by anything but a query: a literal, an f-string, or a `%` / `+` format."""
        head: object = None
        rest = False
        if type(node) is ast.Constant and isinstance(node.value, str):
            head, rest = node.value, len(node.value.split("?", 1)[0]) > len("env://")
        elif type(node) is ast.JoinedStr and node.values and type(node.values[0]) is ast.Constant:
            head, rest = node.values[0].value, True
        elif type(node) is ast.BinOp and type(node.left) is ast.Constant and isinstance(node.left.value, str):
            head, rest = node.left.value, True
        if not isinstance(head, str) or not head.startswith("env://"):
            return False
        return rest and not head[len("env://"):].startswith("?")
