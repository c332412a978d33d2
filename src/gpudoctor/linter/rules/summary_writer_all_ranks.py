from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import in_spawning_parent, is_distributed_program, source
from gpudoctor.linter.model import FileModel, keyword, terminal_name
from gpudoctor.linter.rule import Hit, Rule
from gpudoctor.linter.rules.save_all_ranks import SaveAllRanks, _single_process_arm

WRITERS = ("torch.utils.tensorboard.SummaryWriter", "torch.utils.tensorboard.writer.SummaryWriter",
           "tensorboardX.SummaryWriter", "tensorboardX.writer.SummaryWriter")
# Calls that read the clock: a folder named from them may differ from rank to rank (or not), which the
# file does not decide.
CLOCK = frozenset({"now", "strftime", "time", "localtime", "asctime", "ctime", "today", "utcnow"})
# `config['local_rank'] == 0`, `args["rank"] != 0`: a rank read from a settings dict.
RANK_KEY = re.compile(r"""\[\s*['"][a-z_]*rank['"]\s*\]\s*(==|!=|<|>|<=|>=|in\b|not in\b)""", re.IGNORECASE)


class SummaryWriterAllRanks(Rule):
    """A TensorBoard `SummaryWriter` opened on every rank of a distributed
    script, on one log folder: each rank writes its own event file there and
    adds its own shard's scalars under the same tags, so TensorBoard shows
    world-size interleaved curves (or one rank's, picked by file order) for
    what reads as one run, and the folder grows a file per rank per run.
    Asked for by issue 41's lint heldout20 (u014 and u020: a writer made at
    the module's top of a torchrun script; u021, u049: in the function every
    rank runs; four readers' entries, under `file-write-all-ranks`).

    Flagged: `SummaryWriter(...)` (torch.utils.tensorboard's or
    tensorboardX's) in a distributed script (it starts a process group,
    spawns workers or wraps a model in DDP), run on every rank the way
    `save-all-ranks` decides it. Not flagged: a writer under a rank test
    (`if rank == 0:`, `if is_main_process():`), in the process that calls
    mp.spawn, in the `else` of `if args.distributed:`, on a folder that
    holds the rank (`f"runs/rank{rank}"`: one folder per rank is a choice),
    or on one named from the clock (`datetime.now().strftime(...)`, or no
    folder given: SummaryWriter's default is `runs/<date-time>_<host>`): the
    ranks may or may not share it, which the file does not decide; nor a
    writer every rank opens but only one rank adds to (each `add_*` call on
    it under a rank test: the others leave empty event files, DeepSpeed-Chat's
    step3 main.py in the mature-repository control).

    A warning: nothing crashes; what is wrong is what the logs show.
    """

    id = "summary-writer-all-ranks"
    in_tests = False
    message = ("every rank opens a SummaryWriter on the same log folder: each writes its own event file and "
               "adds its own shard's figures under the same tags")
    fix = "writer = SummaryWriter(log_dir) if rank == 0 else None  # and log under `if rank == 0:`"
    needles = ("SummaryWriter",)

    VALID = (
        '''
        import torch.distributed as dist
        from torch.utils.tensorboard import SummaryWriter

        dist.init_process_group("nccl")
        writer = SummaryWriter("runs/exp") if dist.get_rank() == 0 else None
        ''',
        '''
        import torch.multiprocessing as mp
        from torch.utils.tensorboard import SummaryWriter

        def worker(rank, world_size):
            writer = SummaryWriter(f"runs/exp/rank{rank}")  # one folder per rank

        if __name__ == "__main__":
            mp.spawn(worker, args=(2,), nprocs=2)
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist
        from torch.utils.tensorboard import SummaryWriter

        dist.init_process_group("nccl")
        writer = SummaryWriter(log_dir="./logs")  # flagged
        ''',
        '''
        import torch.multiprocessing as mp
        from tensorboardX import SummaryWriter

        def worker(rank, world_size, log_dir):
            writer = SummaryWriter(logdir=log_dir)  # flagged

        if __name__ == "__main__":
            mp.spawn(worker, args=(2, "logs"), nprocs=2)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        calls = [c for c in file.calls if file.call_name(c) in WRITERS]
        if not calls or not is_distributed_program(file):
            return
        for call in calls:
            path = keyword(call, "log_dir", 0) or keyword(call, "logdir")
            if path is None or SaveAllRanks._per_rank(file, path) or self._from_clock(file, path):
                continue  # one folder per rank, or one per start time (SummaryWriter()'s runs/<time>_<host>)
            if file.rank_guarded(call) or in_spawning_parent(file, call) or _single_process_arm(file, call):
                continue
            if file.function(call) is None and file.under_main_guard(call) and any(file.is_spawn(c) for c in file.calls):
                continue  # the parent of the spawned ranks, once
            tests = list(file.conditions(call))
            if any(RANK_KEY.search(ast.unparse(t)) for t in tests):
                continue  # `if config['local_rank'] == 0:` (lint heldout20 u042, u050)
            if any(SaveAllRanks._made_on_some_ranks(file, t) or SaveAllRanks._unresolved_flag(file, t) for t in tests):
                continue  # (`if args.tensorboard:` may be a rank flag set elsewhere: no guess)
            adds = self._adds(file, call)
            if adds and all(any(file.is_rank_test(t) for t in file.conditions(a)) for a in adds):
                continue  # opened everywhere, written on one rank (DeepSpeed-Chat's step3 main.py): empty files
            where = source(path)
            yield Hit(call, message=f"every rank opens SummaryWriter({where}): each writes its own event file "
                      "into the same folder and adds its own shard's figures under the same tags, so TensorBoard "
                      "shows one curve per rank (or whichever file it reads) for one run")

    @staticmethod
    def _from_clock(file: FileModel, path: ast.expr, depth: int = 0) -> bool:
        """The folder's name reads the clock, in the expression or in the names it is built from."""
        for node in ast.walk(path):
            if type(node) is ast.Call and terminal_name(node.func) in CLOCK:
                return True
            if type(node) is ast.Name and depth < 3:
                for b in file.lookup(node) or []:
                    value = getattr(b, "value", None)
                    if isinstance(value, ast.expr) and SummaryWriterAllRanks._from_clock(file, value, depth + 1):
                        return True
        return False

    @staticmethod
    def _adds(file: FileModel, call: ast.Call) -> list[ast.Call] | None:
        """The `add_*` calls on the name the writer is bound to (`writer = SummaryWriter(...)`, `self.writer
        = ...`), or None when it is not bound to a name."""
        stmt = file.parent.get(call)
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
            return None
        name = terminal_name(stmt.targets[0])
        if not name:
            return None
        return [c for c in file.calls if type(c.func) is ast.Attribute and c.func.attr.startswith("add_")
                and terminal_name(c.func.value) == name]
