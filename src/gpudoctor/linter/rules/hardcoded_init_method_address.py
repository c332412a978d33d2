from __future__ import annotations

import ast
import ipaddress
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule
from gpudoctor.linter.rules.nccl_no_set_device import _started_here

# `tcp://10.1.1.20:23456`: the host part of a tcp:// rendezvous written as an IP address.
TCP_ADDRESS = re.compile(r"^tcp://(\d{1,3}(?:\.\d{1,3}){3})(?::\d+)?/?$")


class HardcodedInitMethodAddress(Rule):
    """`init_process_group(init_method="tcp://10.1.1.20:23456")` in a program that starts its
    processes itself (mp.spawn, `Process(target=...)`): every process it starts runs on this
    machine, so the rendezvous must be this machine's own address, and the literal is the address
    of the machine the author ran it on. Anywhere else rank 0 cannot listen on it ("Cannot assign
    requested address") or, where the address is another host, the ranks wait on it until the
    timeout.

    Flagged: a `tcp://` init_method whose host is an IP address other than the loopback or
    0.0.0.0, written as a literal in the call, in a name or a namespace attribute the file sets
    only to it (`args.init_method = 'tcp://10.9.1.2:34567'`), where the group is created in a
    function the file starts with mp.spawn or `Process`. Not flagged: the loopback
    (`tcp://127.0.0.1:...`, one machine by construction), an address read from the command line
    or the environment (an argparse default is a default: pytorch/examples' ImageNet
    `--dist-url`), a program whose ranks are started by hand on several machines (no spawn: the
    master's address is then the file's to name). A warning: on the author's machine it runs.

    Asked for by lint heldout14's readers (two mp.spawn trainers: `tcp://10.1.1.20:23456`,
    `tcp://9.0.199.130:23457`) and heldout9's (an MNIST trainer's `args.init_method =
    'tcp://10.9.1.2:34567'` before mp.spawn).
    """

    id = "hardcoded-init-method-address"
    message = "the rendezvous is a literal IP address in a program that starts its processes on this machine"
    fix = 'init_method="tcp://127.0.0.1:29500"  # the processes are this machine\'s; or env:// with MASTER_ADDR'
    in_tests = False
    needles = ("tcp://",)

    VALID = (
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def run(rank, size):
            dist.init_process_group("nccl", init_method="tcp://127.0.0.1:23456", rank=rank, world_size=size)

        if __name__ == "__main__":
            mp.spawn(run, args=(2,), nprocs=2)
        ''',
        '''
        import sys
        import torch.distributed as dist

        # one copy per machine, each started by hand with its rank
        dist.init_process_group("gloo", init_method="tcp://10.0.0.1:23456", rank=int(sys.argv[1]), world_size=2)
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def run(rank, size):
            dist.init_process_group("nccl", init_method="tcp://10.1.1.20:23456", rank=rank, world_size=size)  # flagged

        if __name__ == "__main__":
            mp.spawn(run, args=(2,), nprocs=2)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if not any(file.is_spawn(c) or terminal_name(c.func) == "Process" for c in file.calls):
            return  # (a launcher of another module may start the ranks on several machines)
        for call in file.calls_to("init_process_group", TORCH):
            method = keyword(call, "init_method", 1)
            if method is None or not _started_here(file, call):
                continue
            for literal in self._literals(file, method):
                url = str(literal.value)
                found = TCP_ADDRESS.match(url)
                if found is None or _local(found.group(1)):
                    continue
                yield Hit(literal, message=f"the rendezvous is the literal address `{url}` (line "
                          f"{call.lineno}), in a program that starts its processes itself, all on this machine: "
                          "it must be this machine's own address, and on any other machine rank 0 cannot listen on "
                          "it (\"Cannot assign requested address\") or the ranks wait on another host until the "
                          "timeout")
                break

    @staticmethod
    def _literals(file: FileModel, method: ast.expr) -> list[ast.Constant]:
        """The string literals the init_method holds: the literal, a name set only to literals, or an
        attribute of a namespace the file sets only to literals (`args.init_method = 'tcp://...'`)."""
        origins = [o for o in file.origins(method) if isinstance(o, ast.AST)]
        out: list[ast.Constant] = []
        for origin in origins or [method]:
            if type(origin) is ast.Constant and isinstance(origin.value, str):
                out.append(origin)
            elif type(origin) is ast.Attribute and type(origin.value) is ast.Name:
                values = [node.value for node in ast.walk(file.tree) if type(node) is ast.Assign
                          and any(type(t) is ast.Attribute and t.attr == origin.attr for t in node.targets)]
                if not values or not all(constant(v, str) is not None for v in values):
                    return []
                out += [v for v in values if type(v) is ast.Constant]
            else:
                return []  # read from the command line, the environment, a call: the user's to choose
        return out


def _local(host: str) -> bool:
    """The loopback, or the any-address 0.0.0.0 (which connects to this machine)."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return True  # not an address (`tcp://999.1.1.1`): say nothing
    return address.is_loopback or address.is_unspecified

