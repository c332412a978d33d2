from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, env_writes
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import ERROR, Hit, Rule

HIGHEST_PORT = 65535  # a TCP port is 16 bits
TCP_URL = re.compile(r"^tcp://[^/]*:(\d+)/?$")


class MasterPortOutOfRange(Rule):
    """The rendezvous port written as a number no TCP port can be: above
    65535 (`MASTER_PORT = "123478"`, often a digit typed twice). A TCP port
    is 16 bits: every rank fails at `init_process_group` (recent torch:
    ValueError "port must have value from 0 to 65535"; older ones: a
    TypeError from the store's constructor, which does not say why).

    Flagged: `MASTER_PORT` set (`os.environ[...] =`, `update`, `putenv`) to a
    literal above 65535, written there or held by a name the file sets to
    it; `init_process_group(init_method="tcp://host:PORT")` and
    `dist.TCPStore(host, PORT, ...)` with such a port. A default
    (`setdefault`) is not flagged: a launcher's port takes its place. Asked
    for by issue 41's sample (a DeepSpeed issue and a PyTorch issue whose
    askers each typed a six-digit port).
    """

    id = "master-port-out-of-range"
    severity = ERROR  # a port above 65535 is refused by the store: every rank fails
    local_evidence = True  # decided by the flagged call and the lines shown: stands in a faithful repair
    message = "the rendezvous port is above 65535: no TCP port is, and init_process_group fails on every rank"
    fix = 'os.environ["MASTER_PORT"] = "12355"  # 1024-65535, free on the master node'
    needles = ("MASTER_PORT", "tcp://", "TCPStore")

    VALID = (
        '''
        import os

        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "12355"
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group("gloo", init_method="tcp://10.0.0.1:23456", rank=rank, world_size=2)
        ''',
    )
    INVALID = (
        '''
        import os

        os.environ["MASTER_ADDR"] = "localhost"
        os.environ["MASTER_PORT"] = "123478"  # flagged
        ''',
        '''
        import torch.distributed as dist

        PORT = 123553
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{PORT}",  # flagged
                                rank=rank, world_size=2)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        for node, value in env_writes(file, "MASTER_PORT", include_defaults=False):
            for port in self._ports(file, value):
                yield Hit(node, message=f"MASTER_PORT is {port}: no TCP port is above {HIGHEST_PORT}, and "
                          "init_process_group fails on every rank")
        for call in file.calls_to("init_process_group", TORCH):
            url = keyword(call, "init_method", 1)
            for port in self._url_ports(file, url):
                yield Hit(call, message=f"init_method's port is {port}: no TCP port is above {HIGHEST_PORT}, "
                          "and init_process_group fails on every rank")
        for call in file.calls_to("TCPStore", TORCH):  # TCPStore(host_name, port, world_size, is_master, ...)
            for port in self._ports(file, keyword(call, "port", 1)):
                yield Hit(call, message=f"the TCPStore's port is {port}: no TCP port is above {HIGHEST_PORT}, "
                          "and the store cannot be made")

    @staticmethod
    def _ports(file: FileModel, value: ast.expr | None) -> list[int]:
        """The out-of-range ports `value` certainly holds: every value it may
        have is a literal (through `str()` / `int()` and names); [] otherwise."""
        if value is None:
            return []
        while type(value) is ast.Call and terminal_name(value.func) in ("str", "int") and len(value.args) == 1:
            value = value.args[0]
        numbers = []
        for origin in file.origins(value):
            literal = constant(origin)
            if type(literal) is str and literal.strip().isdigit():
                literal = int(literal)
            if type(literal) is not int:
                return []  # (a bool, a name from elsewhere, text that is not a number)
            numbers.append(literal)
        return [n for n in numbers if not 0 <= n <= HIGHEST_PORT]

    def _url_ports(self, file: FileModel, url: ast.expr | None) -> list[int]:
        if url is None:
            return []
        for origin in file.origins(url):
            text = constant(origin, str)
            if text is not None:
                found = TCP_URL.match(text)
                if found and int(found.group(1)) > HIGHEST_PORT:
                    return [int(found.group(1))]
            elif type(origin) is ast.JoinedStr and origin.values:
                # f"tcp://{host}:{PORT}": the port is the last part
                last = origin.values[-1]
                head = origin.values[-2] if len(origin.values) > 1 else None
                if (type(last) is ast.FormattedValue and head is not None and (constant(head, str) or "").endswith(":")
                        and (constant(origin.values[0], str) or "").startswith("tcp://")):
                    return self._ports(file, last.value)
        return []
