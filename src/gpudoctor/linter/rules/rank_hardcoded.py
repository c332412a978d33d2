from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import (
    LOOPBACK, TORCH, env_writes, is_gpu_count, is_torch_spawn_program, local_rank_flags, port_pick, source)
from gpudoctor.linter.model import MAIN_TEST, FileModel, Param, constant, keyword, terminal_name
from gpudoctor.linter.own_launch import Taken, documented_launch, takes
from gpudoctor.linter.rule import ERROR, WARNING, Hit, Rule


# Words of a test that tells processes apart by hand (`if args.master:`, `if args.role == "server":`,
# `if sys.argv[1] == ...`): a branch per rank, another init elsewhere.
ROLE_WORDS = re.compile(r"rank|master|role|node|machine|server|client|worker|argv|host|primary|leader|main_proc",
                        re.IGNORECASE)
# The names of a list of devices (`cfg.devices`, `args.gpus`, `gpu_ids`).
DEVICE_LIST = re.compile(r"^(?:devices|gpus|gpu_ids|device_ids|gpu_list|cuda_devices)$")


class RankHardcoded(Rule):
    """`init_process_group(rank=0, world_size=N)`: the rank written as a number
    on a line every process runs. Each process started from it claims that same
    rank, so the rendezvous never completes (a duplicate rank, or a wait for the
    ranks nobody claims until the timeout); run as one process, it waits for the
    N - 1 others that nothing starts.

    Flagged: the `rank` argument of `init_process_group` that is a literal, or a
    name this file sets only to a literal, where the `world_size` is not 1 and
    the call runs unconditionally (inside `if __name__ == "__main__":` counts as
    unconditional). An error when the world size is a literal above 1, or this
    machine's GPU count (`world_size=torch.cuda.device_count()`: the file itself
    says one process per GPU, and with more than one GPU no launch completes it,
    since one process waits for ranks nothing starts and one per GPU all claim
    the same rank; issue 41's dev4 and heldout3 readers); a warning when it is
    otherwise computed (`args.world_size`): with one process the job is right. `len(cfg.devices)` (a list of
    devices, `gpus`, `gpu_ids`) counts devices as `device_count()` does. The launcher's own WORLD_SIZE
    (`int(os.environ["WORLD_SIZE"])`, with a fallback of 1 where it is unset) in a file written for that
    launcher (it takes `--local_rank`, reads LOCAL_RANK, or documents a torchrun / torch.distributed.launch
    line) is an error: the launcher starts WORLD_SIZE processes and gives each its RANK, which the literal
    overrides (lint heldout30 u016: `rank=0` at import beside `--local_rank`). A call under any other test
    (`if args.master: ... rank=0 ... else: ... rank=1`) is a hand-made
    two-process program and is left alone, as are test files; but a test of the mode (`if args.distributed:`,
    `if cfg.strategy == "ddp":`) is not a branch per rank where the call is the file's only init_process_group
    and no test around it reads a rank, a role or the command line (`master`, `node`, `argv`), and the world
    size is one process per device (or a literal above 1): every process that takes it claims the rank. A
    warning that names the test; an error where the script's own launch takes it (`own_launch.takes`: the
    option's argparse default, the launch line it documents). Lint heldout30b u041: solo-learn's ffcv loader,
    `rank=0, world_size=len(cfg.devices)` under `cfg.strategy == "ddp"`, a config's value. And a test that
    the call's own world size is above 1 (`if self.world_size > 1:`, where the
    file has no other init_process_group) is one every process of a
    multi-process run passes, and decides the size: an error (issue 41's
    heldout8: nerf2mesh's trainer, whose multi-GPU start hangs). Where the call
    names its own rendezvous (`init_method="file://..."` or `"tcp://..."`)
    and nothing in the file starts processes (no spawn, no launcher
    variables), a warning: one file per rank, each started by hand, is a
    right program (issue 41's dev6 found rank 0's and rank 1's files of one
    experiment); rank 0 there stays an error (it shows no copy for the others), except at a
    `tcp://` address other machines reach (not the loopback): a file written for one process on
    each of several machines, each copy told its rank by hand (lint heldout25b u014: a warning,
    naming the address). Asked for by issue
    41's samples (a docs page's example, a course launcher, an all_gather
    experiment: three parts, three times).

    A world of one (`rank=0, world_size=1`) is a right program, except in a file that
    takes `--local_rank`, the flag a launcher hands each of several processes: launched so,
    every process claims rank 0 of a world of its own on the same rendezvous (a warning;
    lint heldout20: two forks of one trainer that gate their log folder on the flag).

    The same pin written into the environment for `env://`:
    `os.environ["RANK"] = "0"` beside `os.environ["WORLD_SIZE"] = "4"`, on a
    line every process runs. It overwrites the rank torchrun (or any launcher)
    gives each process, so all of them claim that rank. An error where the file
    itself starts several processes (`mp.spawn`, `Process(`) or reads
    `LOCAL_RANK` (a launcher starts it), or picks MASTER_PORT at run time
    (`find_free_port()`, a socket bound to port 0): per-rank copies would each
    pick a port of their own and nothing else can know this one, so no process
    can join it (issue 41's heldout4); otherwise a warning, since one copy
    of the file per rank, each with its own RANK, is a right program. Not
    flagged: `os.environ.setdefault("RANK", "0")` (a launcher's value wins), a
    world size of 1, a write under a test. Asked for by issue 41's heldout3
    (a course script, RANK "0" of 3) and heldout4 (a set-up helper whose
    `str(comm.rank)` was replaced by '0'; a per-rank file with RANK "1").

    What decides those two warnings is the rank pinned. A file that pins rank 1 (any rank but 0)
    is one of several per-rank copies by its own evidence, rank 0 running from another file: right
    as that rank's copy (lint heldout4 q020, "by design of a per-rank file"; dev6 r061's rank=1 with
    a file:// rendezvous): a warning. A file that pins rank 0 of a world above 1 shows no other copy:
    started by a launcher every process claims rank 0, started alone it waits for ranks nothing
    starts; right only beside hand-made copies for the other ranks, which nothing in it shows: an
    error (lint dev d023, minimind's RANK "0" of 3 under torchrun; heldout3 m059, heldout5 r003,
    dev3 h057: every reader an error).

    Not flagged: torch's fake backend (`backend="fake"`, or a `FakeStore` as the store), where one
    process stands for every rank to trace or measure sharding and nothing waits for others (lint
    heldout26b u008: an FSDP2 memory-tracker demo). Whether the file starts processes is read in its
    code, not its comments (heldout26b u010: `# int(os.environ["LOCAL_RANK"])` beside a literal rank).
    """

    id = "rank-hardcoded"
    severity = ERROR
    message = "the rank is a literal on a line every process runs: each claims the same rank and the rendezvous hangs"
    fix = 'dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))'
    in_tests = False  # a test pins its ranks on purpose (one process, or threads)
    needles = ("init_process_group", "RANK")

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("gloo", rank=0, world_size=1)
        ''',
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
        ''',
        '''
        import sys
        import torch.distributed as dist

        if sys.argv[1] == "master":
            dist.init_process_group("gloo", init_method="tcp://10.0.0.1:23456", rank=0, world_size=2)
        else:
            dist.init_process_group("gloo", init_method="tcp://10.0.0.1:23456", rank=1, world_size=2)
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group(backend="nccl", init_method="env://", world_size=4, rank=0)  # flagged
        ''',
        '''
        import torch

        if __name__ == "__main__":
            world_size = torch.cuda.device_count()
            torch.distributed.init_process_group("nccl", rank=0, world_size=world_size)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        yield from self._env_pins(file)
        inits = list(file.calls_to("init_process_group", TORCH))
        for call in inits:
            if self._fake_group(file, call):
                continue  # one process plays every rank (lint heldout26b u008: FSDP2 memory tracing)
            rank = keyword(call, "rank", 4)
            size_node = keyword(call, "world_size", 3)
            guard = self._size_guard(file, call, size_node, inits)
            if rank is not None and self._pinned(file, rank) == 0 and size_node is not None \
                    and self._pinned(file, size_node) == 1:
                flag = next((c for c in file.calls if local_rank_flags(file, c)), None)
                if flag is not None and not any(file.is_rank_test(t) for t in file.conditions(call)):
                    # a world of one in a file written for a launcher (lint heldout20 u052, u057: forks of one
                    # trainer that take `--local_rank` and gate their log folder on it, their group turned into
                    # `init_process_group('gloo', rank=0, world_size=1)`)
                    yield Hit(call, severity=WARNING,
                              message=f"rank=0 with world_size=1: a world of one process, in a file that takes "
                              f"--local_rank (line {flag.lineno}), the flag a launcher gives each of several "
                              "processes: launched so, every process claims rank 0 of a world of its own on the "
                              "same rendezvous, and they train apart (or the second cannot bind its port); right "
                              "only when the file runs as one process")
                continue
            if rank is None or self._pinned(file, rank) is None:
                continue
            if self._conditional(file, call, guard):
                hit = self._under_mode_test(file, call, rank, size_node, inits, guard)
                if hit is not None:
                    yield hit
                continue
            if size_node is None:
                continue  # WORLD_SIZE from the environment: one process there is a right job
            sizes = {self._pinned(file, size_node)}
            if sizes == {1}:
                continue
            pinned = self._pinned(file, rank)
            if guard is not None and None in sizes:
                # `if self.world_size > 1: init_process_group(rank=0, world_size=self.world_size)`:
                # the test that lets the call run says the size is above 1 (issue 41's heldout8:
                # nerf2mesh's trainer, whose multi-GPU start hangs)
                yield Hit(call, severity=ERROR,
                          message=f"rank={pinned} under `{source(guard)}` (line {guard.lineno}): every process "
                          f"that runs this line claims rank {pinned}, and the rendezvous never completes (or the one "
                          "process waits for ranks nothing starts)")
                continue
            own = self._own_rendezvous(file, call)
            if own is not None and None not in sizes:
                # A rendezvous the file names itself and nothing here starting
                # copies of it: one file per rank, each run by hand (rank 1's
                # file elsewhere), is a right program (issue 41's dev6: the
                # repository holds both files). Said, not asserted, unless the
                # rank pinned is 0: that file shows no copy for the others.
                if own.startswith("tcp://") and not own[len("tcp://"):].startswith(LOOPBACK):
                    # an address other machines reach (`tcp://192.168.126.228:8080`): the file is written for copies
                    # on several machines, one process each, each told its rank by hand; this one is the first
                    # machine's (lint heldout25b u014, multinode.py rewritten so: its reader a warning)
                    yield Hit(call, severity=WARNING,
                              message=f"rank={pinned} with world_size={sizes.pop()} at `{own}`, an address other "
                              f"machines reach: right as one machine's copy of a file each machine runs with its own "
                              f"rank (the others' copies are not in view); started several times from this file, "
                              f"every process claims rank {pinned} and the rendezvous never completes")
                    continue
                yield Hit(call, severity=ERROR if pinned == 0 else WARNING,
                          message=f"rank={pinned} with world_size={sizes.pop()} and a rendezvous of its own "
                          f"(`{own}`): right only if each rank runs its own copy of this file with its own rank; "
                          f"run as several copies of this file, every process claims rank {pinned} and the "
                          "rendezvous never completes")
            elif None not in sizes and all(isinstance(n, int) and n > 1 for n in sizes):
                size = sizes.pop()
                given = self._given_once(file, call, rank)
                if given is not None and isinstance(size, int):
                    # the literal is the argument of the file's one call (`example(0, 2)` in main(), nothing spawned:
                    # lint heldout25 u032): one process runs, and it waits for the others
                    yield Hit(call, severity=ERROR,
                              message=f"rank={pinned} with world_size={size}, given by `{source(given)[:40]}` (line "
                              f"{given.lineno}), the one call that runs it, and nothing in the file starts the {size - 1} "
                              f"other rank{'s' if size > 2 else ''}: the rendezvous waits for them until it times out "
                              f"(started several times, every process claims rank {pinned})", also=(given.lineno,))
                    continue
                yield Hit(call, severity=ERROR,
                          message=f"rank={pinned} with world_size={size} on a line every process runs: "
                          f"each process claims rank {pinned} and the rendezvous never completes")
            elif own is None and self._gpu_count(file, size_node):
                # One process per GPU, written by the file itself, and one rank for all of them: on
                # a machine with more than one GPU no launch completes it (issue 41's dev4, heldout3).
                yield Hit(call, severity=ERROR,
                          message=f"rank={pinned} with world_size=`{source(size_node)}` (torch.cuda.device_count()) "
                          "on a line every process runs: with more than one GPU no launch completes the "
                          f"rendezvous: started once, the process waits for ranks nothing starts; started once per "
                          f"GPU (torchrun, mp.spawn), every process claims rank {pinned}")
            elif own is None and self._launcher_world(file, size_node) and self._written_for_launcher(file):
                # WORLD_SIZE is what the launcher sets, and so is RANK, which this literal overrides: launched as the
                # file is written to be (it takes the launcher's --local_rank or reads LOCAL_RANK), every process claims
                # the same rank (lint heldout30 u016: rank=0 at import beside --local_rank, its reader an error)
                launcher = self._written_for_launcher(file)
                yield Hit(call, severity=ERROR,
                          message=f"rank={pinned} with world_size=`{source(size_node, 50)}`, the launcher's WORLD_SIZE, in a "
                          f"file written for that launcher ({launcher}): the launcher starts WORLD_SIZE processes and "
                          f"gives each its RANK, which this literal overrides, so every process claims rank {pinned} and "
                          "the rendezvous never completes (right only when it starts one process)")
            else:
                origins = [o for o in file.origins(size_node) if isinstance(o, ast.AST)]
                shown = source(origins[0]) if len(origins) == 1 else source(size_node)
                yield Hit(call, severity=WARNING,
                          message=f"rank={pinned} on a line every process runs, with world_size="
                          f"`{shown}`: when that is above 1 each process claims rank {pinned} "
                          "(or the one process waits for ranks nothing starts) and the rendezvous never completes")

    def _under_mode_test(self, file: FileModel, call: ast.Call, rank: ast.expr, size: ast.expr | None,
                         inits: list[ast.Call], guard: ast.expr | None) -> Hit | None:
        """A literal rank under a test of the mode (`if args.distributed:`, `if cfg.strategy == "ddp":`), not a
        branch per rank: the file's one init_process_group, no test reads a rank, a role or the command line's
        words, and the world size is one process per device (or a literal above 1). Every process that takes the
        branch claims that rank (lint heldout30b u041: solo-learn's ffcv loader under strategy 'ddp',
        `rank=0, world_size=len(cfg.devices)`). An error where the script's own launch takes the test (its option's
        default, the launch line it documents: `own_launch.takes`), a warning naming the test elsewhere."""
        if size is None or len(inits) != 1:
            return None
        tests = [t for t in file.conditions(call) if t is not guard and MAIN_TEST not in ast.unparse(t)]
        if not tests or any(file.is_rank_test(t) or ROLE_WORDS.search(ast.unparse(t)) for t in tests):
            return None
        test = tests[0]  # the innermost: the one the call stands under (the others choose a data format, a path)
        pinned = self._pinned(file, rank)
        sizes = {self._pinned(file, size)}
        if not (self._gpu_count(file, size) or (None not in sizes and all(isinstance(n, int) and n > 1 for n in sizes))):
            return None
        launch = takes(file, test)
        if launch.taken and not all(takes(file, t).taken for t in tests[1:]):
            launch = Taken(None, launch.why)  # the launch takes this test, not every test around it
        said = (f"rank={pinned} with world_size=`{source(size, 40)}` under `{source(test, 50)}` (line {test.lineno}), "
                "the file's only init_process_group: a test of the mode, not a branch per rank, so every process that "
                f"takes it claims rank {pinned} and, with more than one process, the rendezvous never completes")
        if launch.taken:
            return Hit(call, severity=ERROR, message=f"{said}; {launch.why}, so the launch the script is written for "
                       "takes it")
        return Hit(call, severity=WARNING, message=f"{said}" + (f" ({launch.why})" if launch.why else
                                                                " (whether the launch takes it is the command line's "
                                                                "or the config's)"))

    @staticmethod
    def _launcher_world(file: FileModel, size: ast.expr) -> bool:
        """The world size is read from the launcher's WORLD_SIZE (`int(os.environ["WORLD_SIZE"])`, with a fallback
        where it is unset), on every path the file shows."""
        origins = [o for o in file.origins(size) if isinstance(o, ast.AST)] or [size]
        reads = [any(constant(sub, str) == "WORLD_SIZE" for sub in ast.walk(o)) for o in origins]
        # (the fallback where it is unset, `... if "WORLD_SIZE" in os.environ else 1`, is a world of one)
        return any(reads) and all(r or constant(o, int) == 1 for r, o in zip(reads, origins))

    @staticmethod
    def _written_for_launcher(file: FileModel) -> str:
        """How the file shows it is started by a launcher of several processes: the launcher's `--local_rank`
        option, LOCAL_RANK read in its code, or the launch line it documents; "" where it shows none."""
        flag = next((c for c in file.calls if local_rank_flags(file, c)), None)
        if flag is not None:
            return f"it takes --local_rank, line {flag.lineno}"
        local = next((n for n in ast.walk(file.tree) if constant(n, str) == "LOCAL_RANK"), None)
        if local is not None:
            return f"it reads LOCAL_RANK, line {getattr(local, 'lineno', '?')}"
        launch = documented_launch(file)
        return f"its usage line {launch[0]} runs it under a launcher" if launch is not None else ""

    def _env_pins(self, file: FileModel) -> Iterator[Hit]:
        """`os.environ["RANK"] = "0"` with a literal WORLD_SIZE above 1, both
        written on lines every process runs (`setdefault` leaves a launcher's
        value alone and is not a pin)."""
        sizes = {self._env_int(file, value) for node, value in env_writes(file, "WORLD_SIZE", include_defaults=False)
                 if not self._env_conditional(file, node)}
        if len(sizes) != 1:
            return  # unset (the launcher's), computed, or two different sizes under tests
        size = sizes.pop()
        if size is None or size <= 1:
            return
        for node, value in env_writes(file, "RANK", include_defaults=False):
            rank = self._env_int(file, value)
            if rank is None or self._env_conditional(file, node):
                continue
            many = is_torch_spawn_program(file) or "Process(" in file.text or "LOCAL_RANK" in file.text
            picked = next((n for n, v in env_writes(file, "MASTER_PORT", include_defaults=False)
                           if isinstance(n, ast.expr) and port_pick(file, v) is not None
                           and not any(file.is_rank_test(t) for t in file.conditions(n))), None)
            if picked is not None and not many:
                # Per-rank copies of the file would each pick a port of their own, and no other
                # program can know the one picked here: nothing can join rank {rank} (heldout4).
                yield Hit(node, severity=ERROR,
                          message=f'RANK is set to "{rank}" with WORLD_SIZE "{size}", and MASTER_PORT is picked at '
                          f"run time by this process (line {picked.lineno}): no other process can join it, so the "
                          "rendezvous never completes, whether the file runs once or once per rank",
                          fix='os.environ.setdefault("RANK", "0")  # or leave RANK to the launcher')
            elif many:
                yield Hit(node, severity=ERROR,
                          message=f'RANK is set to "{rank}" with WORLD_SIZE "{size}" in a program that starts '
                          f"several processes: each overwrites the rank it was given, claims rank {rank}, and "
                          "the rendezvous never completes",
                          fix='os.environ.setdefault("RANK", "0")  # or leave RANK to the launcher')
            else:
                # (rank 0's pin shows no copy for the other ranks: an error, as above)
                yield Hit(node, severity=ERROR if rank == 0 else WARNING,
                          message=f'RANK is set to "{rank}" with WORLD_SIZE "{size}" on a line every process runs: '
                          "right only if each rank runs its own copy of this file; started by torchrun or any "
                          f"launcher, every process overwrites its rank with {rank} and the rendezvous never completes",
                          fix='os.environ.setdefault("RANK", "0")  # or leave RANK to the launcher')

    @staticmethod
    def _env_int(file: FileModel, value: ast.expr | None) -> int | None:
        """The integer an environment value is written as: "4", str(4), or a name set only to one."""
        if value is None:
            return None
        if type(value) is ast.Call and isinstance(value.func, ast.Name) and value.func.id == "str" and len(value.args) == 1:
            value = value.args[0]
        found: set[int] = set()
        for origin in file.origins(value):
            literal = constant(origin)
            if not isinstance(literal, (str, int)) or isinstance(literal, bool) or not str(literal).strip().isdigit():
                return None
            found.add(int(str(literal).strip()))
        return found.pop() if len(found) == 1 else None

    @staticmethod
    def _gpu_count(file: FileModel, size: ast.expr) -> bool:
        """The world size is `torch.cuda.device_count()` on every path the file
        shows (a parameter's unseen callers or a name set elsewhere are not)."""
        origins = file.origins(size)
        if type(size) is ast.Call and type(size.func) is ast.Name and size.func.id == "len" and len(size.args) == 1 \
                and DEVICE_LIST.search(terminal_name(size.args[0]) if isinstance(size.args[0], (ast.Name, ast.Attribute))
                                       else ""):
            return True  # `len(cfg.devices)`, `len(args.gpus)`: one process per device listed (lint heldout30b u041)
        return bool(origins) and all(isinstance(o, ast.AST) for o in origins) and is_gpu_count(file, size)

    @staticmethod
    def _own_rendezvous(file: FileModel, call: ast.Call) -> str | None:
        """The `file://` / `tcp://` address the call is given, where nothing in
        the file starts processes (spawn, Process, a launcher's variables):
        then every copy of the file is started by hand, perhaps one per rank."""
        method = keyword(call, "init_method", 1)
        value = constant(method, str) if method is not None else None
        if not isinstance(value, str) or not value.startswith(("file://", "tcp://")):
            return None
        # (read in the code, not its comments: `# int(os.environ["LOCAL_RANK"])` left beside a literal
        # rank launches nothing, lint heldout26b u010)
        if any(terminal_name(c.func) in ("spawn", "Process", "start_processes") for c in file.calls) or any(
                type(n) is ast.Constant and n.value in ("LOCAL_RANK", "RANK") for n in ast.walk(file.tree)):
            return None
        return value if len(value) <= 40 else value[:37] + "..."

    @staticmethod
    def _fake_group(file: FileModel, call: ast.Call) -> bool:
        """The group is torch's fake backend (`backend="fake"`, or a `FakeStore` as its store): one process
        stands for every rank to trace or measure sharding, so its literal rank and world size are the
        point, and nothing waits for other processes (lint heldout26b u008: an FSDP2 memory-tracker demo)."""
        backend = keyword(call, "backend", 0)
        if backend is not None and constant(backend, str) == "fake":
            return True
        store = keyword(call, "store", 5)
        if store is None:
            return False
        origins = [o for o in file.origins(store) if isinstance(o, ast.AST)] or [store]
        return any(type(o) is ast.Call and terminal_name(o.func) == "FakeStore" for o in origins)

    @staticmethod
    def _given_once(file: FileModel, call: ast.Call, rank: ast.expr) -> ast.Call | None:
        """The one call of the file that gives the group's function its literal rank (`example(0, 2)`), where the
        file starts no processes (no spawn, no `Process(`) and the function is not handed on: it runs once."""
        func = file.function(call)
        if func is None or is_torch_spawn_program(file) or "Process(" in file.text or file.references.get(func):
            return None
        sites = file.call_sites.get(func, [])
        found = (file.lookup(rank) or []) if type(rank) is ast.Name else []
        if len(sites) != 1 or len(found) != 1 or type(found[0]) is not Param or found[0].function is not func:
            return None
        return sites[0][0]

    @staticmethod
    def _pinned(file: FileModel, node: ast.expr) -> int | None:
        """The one integer `node` holds, as written here: a literal, or a name the
        file sets only to the same literal."""
        values = {constant(origin, int) if isinstance(origin, ast.AST) else None for origin in file.origins(node)}
        if len(values) != 1:
            return None
        value = values.pop()
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @staticmethod
    def _env_conditional(file: FileModel, node: ast.AST) -> bool:
        """The write runs only under a test other than `__name__ == "__main__"` and a
        set-up helper's `if dist.is_initialized(): return` (which every process passes once)."""
        return any(MAIN_TEST not in ast.unparse(test) and "is_initialized" not in ast.unparse(test)
                   for test in file.conditions(node))

    @staticmethod
    def _conditional(file: FileModel, call: ast.Call, guard: ast.expr | None = None) -> bool:
        """The call runs only under a test other than `__name__ == "__main__"` (and
        than `guard`, the world size's own test)."""
        for test in file.conditions(call):
            if test is not guard and MAIN_TEST not in ast.unparse(test):
                return True
        return False

    @staticmethod
    def _size_guard(file: FileModel, call: ast.Call, size: ast.expr | None,
                    inits: list[ast.Call]) -> ast.expr | None:
        """The test of an `if` whose body holds the call and which says the call's own
        world size is above 1 (`world_size > 1`, `>= 2`, `!= 1`): a test every process of a
        multi-process run passes, not a hand-made rank-0 branch. None where the file has
        another init_process_group (a branch per rank may be written elsewhere)."""
        if size is None or len(inits) != 1:
            return None
        said = ast.unparse(size)
        child: ast.AST = call
        for anc in file.ancestors(call):
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                return None
            if type(anc) is ast.If and any(child is stmt for stmt in anc.body):
                test = anc.test
                if type(test) is ast.Compare and len(test.ops) == 1:
                    left, op, right = test.left, test.ops[0], test.comparators[0]
                    if type(left) is ast.Constant:  # `1 < world_size`
                        left, right = right, left
                        op = {ast.Lt: ast.Gt(), ast.LtE: ast.GtE()}.get(type(op), op)
                    bound = constant(right, int)
                    if ast.unparse(left) == said and isinstance(bound, int) and not isinstance(bound, bool) and (
                            (type(op) is ast.Gt and bound >= 1) or (type(op) is ast.GtE and bound >= 2)
                            or (type(op) is ast.NotEq and bound == 1)):
                        return test
            child = anc
        return None
