from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.lint.idioms import env_writes
from gpudoctor.lint.model import FileModel, terminal_name
from gpudoctor.lint.rule import Hit, Rule


class HardcodedMasterPort(Rule):
    """`MASTER_PORT` set to a literal: the next job on the same host (a
    second experiment, a test run, a colleague) picks the same port and
    fails with "Address already in use", or worse, joins the wrong
    rendezvous.

    Pick a free port at run time, or let `torchrun --standalone` choose one.
    `os.environ.setdefault("MASTER_PORT", ...)` is not flagged: the
    environment still decides.
    """

    id = "hardcoded-master-port"
    message = "MASTER_PORT is set to a literal: the next job on this host collides with it"
    fix = 'os.environ["MASTER_PORT"] = str(free_port())  # bind a socket to port 0; or torchrun --standalone'
    needles = ("MASTER_PORT",)

    VALID = (
        '''
        import os
        import socket

        def free_port():
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                return s.getsockname()[1]

        os.environ["MASTER_PORT"] = str(free_port())
        ''',
        '''
        import os

        os.environ.setdefault("MASTER_PORT", "29500")
        ''',
        '''
        import os

        os.environ["MASTER_PORT"] = os.environ.get("PORT", "29500")
        ''',
    )
    INVALID = (
        '''
        import os

        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "12355"  # flagged
        ''',
        '''
        import os

        PORT = 29500
        os.environ["MASTER_PORT"] = str(PORT)  # flagged
        ''',
        '''
        from os import environ

        environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "23456"})  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for node, value in env_writes(file, "MASTER_PORT", include_defaults=False):
            if value is not None and self._literal(file, value):
                yield Hit(node, message=f"MASTER_PORT is set to the literal {ast.unparse(value)}: the next job on "
                          "this host collides with it")

    def _literal(self, file: FileModel, expr: ast.expr) -> bool:
        # `str(12355)`, f"{PORT}" and names bound to literals are still literals.
        if type(expr) is ast.Call and terminal_name(expr.func) in ("str", "int") and len(expr.args) == 1:
            return self._literal(file, expr.args[0])
        if type(expr) is ast.JoinedStr:
            return all(
                type(v) is ast.Constant or (type(v) is ast.FormattedValue and self._literal(file, v.value))
                for v in expr.values
            )
        origins = file.origins(expr)
        if not origins:
            return False
        for origin in origins:
            if type(origin) is ast.Constant and isinstance(origin.value, (int, str)) and not isinstance(origin.value, bool):
                continue
            if origin is not expr and isinstance(origin, ast.expr) and type(origin) in (ast.Call, ast.JoinedStr):
                if self._literal(file, origin):
                    continue
            return False
        return True
