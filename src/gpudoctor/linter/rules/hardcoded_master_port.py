from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, env_writes, string_prefix
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule

# A launcher named in a command the file builds, and its port option given a literal.
LAUNCHER = re.compile(r"\btorchrun\b|torch\.distributed\.(run|launch)\b")
PORT_OPTION = re.compile(r"--master[_-]port(?:[= ](\d+))?$")
# DeepSpeed's calls that start the process group (`deepspeed.init_distributed()`, `deepspeed.initialize(...)`).
DEEPSPEED_STARTS = frozenset({"init_distributed", "initialize"})
# A program run by SLURM or MPI across nodes: every node must use the same port.
MULTI_NODE = ("SLURM_", "OMPI_COMM_WORLD", "PMI_RANK", "MPI.COMM_WORLD", ".Get_rank()", ".Get_size()")
# ... unless MASTER_ADDR is this machine: then the job is one node (issue 41's sample: mpirun on one host).
LOOPBACK = ("localhost", "127.0.0.1", "::1")


class HardcodedMasterPort(Rule):
    """`MASTER_PORT` set to a literal: the next job on the same host (a
    second experiment, a test run, a colleague) picks the same port and
    fails with "Address already in use", or worse, joins the wrong
    rendezvous.

    Let the environment decide: `os.environ.setdefault("MASTER_PORT", ...)`
    keeps what a launcher set, and `torchrun --standalone` picks a free port
    on one node. (A free port picked inside the script breaks multi-node
    jobs: each node would pick its own.) Not flagged: `setdefault`, a write
    under a test of `MASTER_PORT` itself (`if "MASTER_PORT" not in
    os.environ:`, a default), and a write in the branch of a SLURM / MPI
    launch (`if "SLURM_PROCID" in os.environ:`) or, unconditional, in a
    function that reads their variables (or calls mpi4py's `Get_rank()`): the nodes must agree on one fixed
    port (unless the same function sets MASTER_ADDR to localhost: one node
    then, and the next job there collides). A port written from a
    constant dict of the file (`CONFIG["port"]`) counts as a literal.
    A literal port in a `tcp://` rendezvous (`init_method="tcp://127.0.0.1:29500"`,
    `args.dist_url = 'tcp://127.0.0.1:{}'.format(12345)`) is the same fact, said in a
    program (a main block) but not in a snippet: the readers of lint heldout19 to
    heldout26 asked for 26 such, the forum snippets' readers (dev..heldout8) passed
    over most (`_tcp_rendezvous`).

    A default is flagged where the file starts its processes itself
    (mp.spawn): `os.environ.get("MASTER_PORT", "12355")` or a write under
    `if "MASTER_PORT" not in os.environ:`. No launcher sets MASTER_PORT for
    processes a script spawns, so the default is the port of every run. Asked
    for by lint heldout14's and heldout15's readers (four spawned trainers). A
    `setdefault` there is the same fact (no launcher sets the variable it would
    keep), and said too: lint heldout18 u047 and heldout26 u010 asked for it
    (`os.environ.setdefault("MASTER_PORT", "29500")` above the mp.spawn trainer);
    lint heldout10's reader passed over one whose comment says it keeps an outside port.

    A launcher command the file builds as an argument vector (`[sys.executable, '-m',
    'torch.distributed.run', '--master_port=29500', ...]` for subprocess) with a literal
    `--master_port` is the same literal (lint heldout20: a script that relaunches itself under
    torchrun); a computed option (`f'--master_port={port}'`) is not, nor a command written as one
    string (a usage note in a docstring; a sweep's shell line, which its reader passed over).

    Not a write in a file whose every `init_process_group` names its own rendezvous
    (`init_method='file:...'` or `'tcp://host:port'`) and that reads MASTER_PORT nowhere: only
    `env://` reads it, so the literal reaches no rendezvous (lint heldout19: a gloo trainer
    whose `init_method` is a `file:` path beside `MASTER_PORT = '2568'`).

    Not a write in a module-level function that nothing in the file calls or
    passes on, where code the main block reaches starts the process group (the main
    block itself, or a function it calls, directly or through others; `init_process_group`,
    or DeepSpeed's `init_distributed()` / `initialize(...)`): the program runs without
    that function, so its port reaches no process (lint heldout17: a `setup()` whose call
    `#setup(0, 1)` is commented out, the main block calling `init_process_group`; lint
    heldout24 u044, u045: an unused `setup()` beside `deepspeed.init_distributed()` in the
    function the main block runs; h16 u051, lint heldout19 u054). A snippet with no main
    block, a module whose group starts only in functions no main block reaches (which
    other modules may call), or one whose group starts only in that function (an excerpt
    cut before its call: lint dev6 r030), is still flagged.
    """

    id = "hardcoded-master-port"
    in_tests = False  # a test picks its port on purpose (and runs alone)
    message = "MASTER_PORT is set to a literal: the next job on this host collides with it"
    fix = 'os.environ.setdefault("MASTER_PORT", "29500")  # the launcher\'s port wins; or torchrun --standalone'
    needles = ("MASTER_PORT", "master_port", "master-port", "tcp://")

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
        '''
        import os

        if "MASTER_PORT" not in os.environ:
            os.environ["MASTER_PORT"] = "29500"
        ''',
        '''
        import os

        if "SLURM_PROCID" in os.environ:
            os.environ["MASTER_PORT"] = "29500"  # every node must agree on it
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
        '''
        import os

        DIST = {"backend": "gloo", "port": 12355}
        os.environ["MASTER_PORT"] = str(DIST["port"])  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        yield from _launch_command(file)
        yield from _tcp_rendezvous(file)
        if _read_by_no_group(file):
            return  # every group names its own rendezvous (file://, tcp://): the port is nobody's
        spawned = any(file.is_spawn(c) for c in file.calls)
        for node, value in env_writes(file, "MASTER_PORT", include_defaults=spawned):
            if _never_run(file, node):
                continue  # a set-up function the program does not use: its port is nobody's
            tests = list(file.conditions(node))
            one_machine = self._loopback_address(file, node)
            if not one_machine and any(word in ast.unparse(test) for test in tests for word in MULTI_NODE):
                continue  # the SLURM / MPI branch: the nodes must agree on one port
            if not one_machine and not tests and self._multi_node_scope(file, node):
                continue  # a program SLURM / MPI starts (it reads their variables unconditionally)
            default = self._default(file, node, value, tests)
            if default is not None:
                if spawned and not _mpi_groups_only(file):
                    yield Hit(node, message=f"MASTER_PORT falls back to the literal {ast.unparse(default)[:40]} in a "
                              "program that starts its processes itself (mp.spawn): no launcher sets MASTER_PORT "
                              "there, so every run uses that port, and the next job on this host collides with it",
                              fix="port = free_port()  # picked once in the parent, before mp.spawn, and passed to "
                              "every worker")
                continue  # (elsewhere a default: the launcher's port wins)
            if value is not None and self._literal(file, value):
                shown = ast.unparse(value)
                if type(value) is ast.Name:  # `master_port = '8889'` earlier: show the literal too
                    literals = [ast.unparse(o) for o in file.origins(value) if type(o) is ast.Constant]
                    shown = f"{shown} = {literals[0]}" if len(literals) == 1 else shown
                yield Hit(node, message=f"MASTER_PORT is set to the literal {shown}: the next job on "
                          "this host collides with it")

    def _default(self, file: FileModel, node: ast.AST, value: ast.expr | None, tests: list[ast.expr]) -> ast.expr | None:
        """The literal a write gives MASTER_PORT only where the environment has none: the default of
        `os.environ.get("MASTER_PORT", "12355")` / `os.getenv(...)`, `os.environ.setdefault(...)`, or a write under a test of
        MASTER_PORT itself. None for any other write (or a default that is not a literal)."""
        if type(node) is ast.Call and terminal_name(node.func) == "setdefault":  # `os.environ.setdefault(...)`
            return value if value is not None and self._literal(file, value) else None
        if type(value) is ast.Call and terminal_name(value.func) in ("get", "getenv") and len(value.args) == 2 \
                and constant(value.args[0], str) == "MASTER_PORT":
            return value.args[1] if self._literal(file, value.args[1]) else None
        if any(constant(sub) == "MASTER_PORT" for test in tests for sub in ast.walk(test)):
            return value if value is not None and self._literal(file, value) else None
        return None

    @staticmethod
    def _loopback_address(file: FileModel, node: ast.AST) -> bool:
        """The same function (or module) sets MASTER_ADDR to this machine's
        loopback address: every rank runs here, whatever launched them."""
        scope = file.function(node)
        for write, value in env_writes(file, "MASTER_ADDR", include_defaults=False):
            if file.function(write) is scope and value is not None and any(
                    constant(o, str) in LOOPBACK for o in file.origins(value)):
                return True
        return False

    @staticmethod
    def _multi_node_scope(file: FileModel, node: ast.AST) -> bool:
        """The function (or module) around `node` mentions SLURM / MPI variables."""
        scope = file.function(node) or file.tree
        # (a snippet read as a function's body has its `def` on line 0)
        lines = file.text.splitlines()[max(getattr(scope, "lineno", 1), 1) - 1: getattr(scope, "end_lineno", None)]
        return any(word in line for line in lines for word in MULTI_NODE)

    def _literal(self, file: FileModel, expr: ast.expr) -> bool:
        # `str(12355)`, f"{PORT}" and names bound to literals are still literals.
        if type(expr) is ast.Call and terminal_name(expr.func) in ("str", "int") and len(expr.args) == 1:
            return self._literal(file, expr.args[0])
        if type(expr) is ast.JoinedStr:
            return all(
                type(v) is ast.Constant or (type(v) is ast.FormattedValue and self._literal(file, v.value))
                for v in expr.values
            )
        if type(expr) is ast.Subscript and constant(expr.slice) is not None:  # CONFIG["port"]
            table = [o for o in file.origins(expr.value) if type(o) is ast.Dict]
            values = [v for d in table for k, v in zip(d.keys, d.values) if k is not None and constant(k) == constant(expr.slice)]
            return len(table) == 1 and len(values) == 1 and self._literal(file, values[0])
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


def _never_run(file: FileModel, node: ast.AST) -> bool:
    """`node` is in a module-level function that nothing in the file calls or passes on, in a program
    whose main block starts the process group itself: the program runs without that function, so
    what it writes reaches no process (lint heldout17 u009, u010: a
    `setup()` that writes MASTER_PORT, its call `#setup(0, 1)` commented out, the main block calling
    `dist.init_process_group("nccl")` itself). A snippet with no main block (a forum post's `setup()`,
    called by code it leaves out), a module whose group starts elsewhere (in a function another
    module may call along with this one), or one whose only process group starts inside that
    function (an excerpt cut before the main block calls it: lint dev6 r030), is still read as run."""
    func = file.function(node)
    if func is None or type(file.parent.get(func)) is not ast.Module or file.entry_sites(func):
        return False
    starts = [call for call in file.calls if file.is_call_to(call, "init_process_group", TORCH)
              or (terminal_name(call.func) in DEEPSPEED_STARTS and "deepspeed" in ast.unparse(call.func))]
    return any(_reached_from_main(file, call) for call in starts)


def _reached_from_main(file: FileModel, node: ast.AST, depth: int = 0) -> bool:
    """`node` runs when the program does: under the main guard, or in a function that a call so reached
    makes (the main block's `main()` calling `train()`, which starts the group: lint heldout24 u044,
    u045, whose unused `setup()` writes MASTER_PORT while `deepspeed.init_distributed()` starts the group in
    the function the main block runs; h16 u051's `setup_dist`, never called, beside `basic_worker`'s
    own `init_process_group`)."""
    func = file.function(node)
    if func is None:
        return file.under_main_guard(node)
    if depth > 4:
        return False
    return any(_reached_from_main(file, site, depth + 1) for site in file.entry_sites(func))


def _read_by_no_group(file: FileModel) -> bool:
    """The file starts its process groups, each with an `init_method` that names its own rendezvous
    (a `file:` path or a `tcp://` address), and nothing in it reads MASTER_PORT (`os.environ["MASTER_PORT"]`,
    `.get("MASTER_PORT")`, `os.getenv`): the port it writes is read by no group (lint heldout19 u065)."""
    inits = list(file.calls_to("init_process_group", TORCH))
    if not inits:
        return False
    for init in inits:
        method = string_prefix(file, keyword(init, "init_method", 1))
        if method is None or not (method.startswith("file:") or method.startswith("tcp://")):
            return False
    for node in ast.walk(file.tree):
        if constant(node, str) != "MASTER_PORT":
            continue
        up = file.parent.get(node)
        if type(up) is ast.Subscript and type(up.ctx) is ast.Load:
            return False
        if type(up) is ast.Call and terminal_name(up.func) in ("get", "getenv", "pop") and node in up.args:
            return False
    return True


def _launch_command(file: FileModel) -> Iterator[Hit]:
    """A launcher command the file builds as an argument vector (a list or tuple) that starts torchrun
    (`-m torch.distributed.run`, `torchrun`, the old launch) with a literal `--master_port`: every run
    it starts meets on that port, and the next job on this host collides with it (lint heldout20 u055: a
    script that relaunches itself under torch.distributed.run with `'--master_port=29500'`). An option
    given a value the file computes (`f'--master_port={port}'`) is not said, nor a command written as one
    string (a usage note in a docstring, lint heldout14 u042; a sweep's shell line run job after job by
    os.system, heldout3 m002, which its reader passed over)."""
    for node in ast.walk(file.tree):
        if not isinstance(node, (ast.List, ast.Tuple)):
            continue
        tokens: list[tuple[ast.expr, object]] = [(part, constant(part)) for part in node.elts]
        if not any(type(w) is str and LAUNCHER.search(w) for _, w in tokens):
            continue
        for i, (part, word) in enumerate(tokens):
            match = PORT_OPTION.match(word) if type(word) is str else None
            if match is None:
                continue
            port = match.group(1)
            if port is None and i + 1 < len(tokens):
                port = str(tokens[i + 1][1]) if tokens[i + 1][1] is not None else None  # ['--master_port', '29500']
            if port and port.isdigit():
                yield Hit(part, message=f"the launcher command this file builds passes the literal --master_port "
                          f"{port}: every run it starts meets on that port, and the next job on this host "
                          "collides with it",
                          fix="drop --master_port (torchrun --standalone picks a free port on one node), or "
                          "take it from the environment: f'--master_port={os.environ.get(\"MASTER_PORT\", 29500)}'")


# A `tcp://host:port` rendezvous whose port is written out; the host may be a part the file computes ('{}').
TCP_PORT = re.compile(r"^tcp://(?P<host>[^/]*):(?P<port>\d{2,5})/?$")
# Where a rendezvous address is kept: `init_method=`, `args.dist_url = ...`, `{"init_method": ...}`.
RENDEZVOUS_NAME = re.compile(r"init_method|dist[_-]?url", re.IGNORECASE)
# Hosts that stand for the reader's own (the docs' `tcp://IP_OF_NODE0:FREEPORT`, `some-host`, pytorch/examples'
# multicast `224.66.41.62`): a template to fill in, not a port the file runs on.
PLACEHOLDER_HOST = re.compile(r"^(?:some[-_]?host|host|ip|ip_of_\w+|master[-_]?(?:ip|addr)|224\.66\.41\.62)$", re.IGNORECASE)
IP_ADDRESS = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")


def _mpi_groups_only(file: FileModel) -> bool:
    """Every process group the file starts is MPI's: mpirun gives the ranks their rendezvous and
    MASTER_PORT is never read, whatever default the file writes (tests/fixtures/lint/mpi_spawned.py)."""
    backends = [constant(keyword(call, "backend", 0), str) for call in file.calls
                if file.is_call_to(call, "init_process_group", TORCH)]
    return bool(backends) and all(b == "mpi" for b in backends)


def _tcp_rendezvous(file: FileModel) -> Iterator[Hit]:
    """A `tcp://` rendezvous the program starts its group on, with the port written in the file: given as
    `init_method` (to `init_process_group` or a launcher helper's `init_method=`), or kept where the file keeps
    its address (`args.dist_url = 'tcp://127.0.0.1:{}'.format(12345)`, `{"init_method": "tcp://...:29500"}`).
    The rank-0 process listens on that port: a second job on the host (another experiment, a colleague's)
    fails with "Address already in use", or its ranks join the first job's store. The same fact as a literal
    MASTER_PORT, for the other rendezvous (issue 41: the readers of lint heldout19 to heldout26 asked for 26 of
    them; those of the restated forum snippets, dev..heldout8, passed over most). Said in a program (a main block:
    the port is the one it runs on), not in a snippet or a helper module (its address illustrates a call: dev..dev6
    passed over 9 such, heldout3 m039 asked for one). One diagnostic per file, naming every place; where the port
    is a name's literal (`RPC_PORT = 29501`), at that literal. Not said: an argparse default (`--dist-url`: a command line decides), a port read from the
    environment or picked at run time, an MPI group's (mpirun decides), a template host (`IP_OF_NODE0`, pytorch/examples' `224.66.41.62`), a
    literal IP address other than the loopback in a program that spawns its processes (hardcoded-init-method-address
    says that one), a write in a set-up function the program never runs, and, as for MASTER_PORT, an address
    other than the loopback in the branch of a SLURM / MPI launch (its nodes must agree on one port: the
    mature-repository control's barlowtwins main.py, `f'tcp://{host_name}:58472'` under `SLURM_JOB_ID`)."""
    if not any(type(stmt) is ast.If and any(constant(sub) == "__main__" for sub in ast.walk(stmt.test))
               for stmt in file.tree.body):
        return  # a snippet (a forum post's call, a helper module): its address illustrates, no program runs on it
    spawned = any(file.is_spawn(c) for c in file.calls)
    sites: list[ast.expr] = []
    for call in file.calls:
        torchs = file.is_call_to(call, "init_process_group", TORCH)
        if torchs and constant(keyword(call, "backend", 0), str) == "mpi":
            continue  # MPI's group takes its ranks from mpirun: the init_method is not read (lint dev5 n082)
        value = keyword(call, "init_method", 1) if torchs else next(
            (k.value for k in call.keywords if k.arg == "init_method"), None)
        if value is not None:
            sites.append(value)
    for node in ast.walk(file.tree):
        if type(node) is ast.Assign and len(node.targets) == 1 and RENDEZVOUS_NAME.search(terminal_name(node.targets[0])):
            sites.append(node.value)
        elif type(node) is ast.Dict:
            sites += [v for k, v in zip(node.keys, node.values) if RENDEZVOUS_NAME.fullmatch(constant(k, str) or "")]
    seen: set[int] = set()
    for site in sites:
        text = _rendezvous_text(file, site) or ""
        match = TCP_PORT.match(text)
        if match is None or id(site) in seen:
            continue
        seen.add(id(site))
        host = match.group("host")
        if PLACEHOLDER_HOST.match(host) or "{}" in match.group("port"):
            continue
        if spawned and IP_ADDRESS.match(host) and not host.startswith("127.") and host != "0.0.0.0":
            continue  # hardcoded-init-method-address: the address is the mistake there
        if _never_run(file, site):
            continue
        tests = list(file.conditions(site))
        if host not in LOOPBACK and (any(word in ast.unparse(t) for t in tests for word in MULTI_NODE)
                                     or (not tests and HardcodedMasterPort._multi_node_scope(file, site))):
            continue  # a SLURM / MPI launch's address: its nodes must agree on one port (as for MASTER_PORT)
        # the port written as a name's literal (`RPC_PORT = 29501`, then `.format(RPC_PORT)`): said where the fix goes
        literal = next((o for sub in ast.walk(site) if type(sub) is ast.Name for o in file.origins(sub)
                        if type(o) is ast.Constant and str(o.value) == match.group("port")), None)
        yield Hit(literal or site, cause="tcp:// rendezvous port",
                  message=f"the tcp:// rendezvous {text[:60]} has the literal port {match.group('port')}: rank 0 listens "
                  "on it, so the next job on this host that starts with the same file collides (\"Address already in "
                  "use\") or its ranks join this job's store",
                  fix="init_method='env://'  # with torchrun (--standalone picks a free port), or MASTER_PORT from the "
                  "environment; a port picked in the parent before mp.spawn and passed to every worker")


def _rendezvous_text(file: FileModel, expr: ast.expr | None, depth: int = 0) -> str | None:
    """The text a rendezvous address spells, '{}' for each part the file computes: a literal, an f-string,
    `'...{}'.format(x)`, `'tcp://' + host + ':' + port`, through a name bound to one value. None where the
    start is not written."""
    if expr is None or depth > 3 or constant(expr, str) is not None:
        return constant(expr, str) if expr is not None and depth <= 3 else None
    if type(expr) is ast.JoinedStr:
        parts = [constant(v, str) if type(v) is ast.Constant else _part(file, v.value) if type(v) is ast.FormattedValue
                 else "{}" for v in expr.values]
        return "".join(p if p is not None else "{}" for p in parts)
    if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr == "format" and not expr.keywords:
        form = constant(expr.func.value, str)
        if form is None or any(type(a) is ast.Starred for a in expr.args):
            return None
        try:
            return form.format(*[_part(file, a) or "{}" for a in expr.args])
        except (IndexError, KeyError, ValueError):
            return None
    if type(expr) is ast.BinOp and type(expr.op) is ast.Add:
        left = _rendezvous_text(file, expr.left, depth + 1)
        return None if left is None else left + (_part(file, expr.right) or "{}")
    if type(expr) is ast.Name:
        origins = [o for o in file.origins(expr) if o is not expr]
        if len(origins) == 1 and isinstance(origins[0], ast.expr):
            return _rendezvous_text(file, origins[0], depth + 1)
    return None


def _part(file: FileModel, expr: ast.expr) -> str | None:
    """A piece of an address that is a literal (`12345`, `PORT` bound once to 29500, `str(12355)`); None otherwise."""
    if type(expr) is ast.Call and terminal_name(expr.func) in ("str", "int") and len(expr.args) == 1:
        return _part(file, expr.args[0])
    origins = file.origins(expr)
    if len(origins) == 1 and type(origins[0]) is ast.Constant and isinstance(origins[0].value, (int, str)) \
            and not isinstance(origins[0].value, bool):
        return str(origins[0].value)
    return None
