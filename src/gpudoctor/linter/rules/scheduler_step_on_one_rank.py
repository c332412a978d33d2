from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from gpudoctor.linter.idioms import is_distributed_program, source
from gpudoctor.linter.model import FileModel, terminal_name
from gpudoctor.linter.rule import Hit, Rule

# `scheduler.step()`, `lr_scheduler.step(val_loss)`, `self.sched.step()`; `trainer.step_scheduler(auc)`.
SCHEDULER = re.compile(r"sched", re.IGNORECASE)
# A test that reads the rank in its own words (`args.local_rank == 0`, `is_main_process(rank)`), not one the
# rank decides further off (`if self.scheduler is not None:`, lint heldout16 u013, every rank's scheduler).
READS_RANK = re.compile(r"rank|main_process|is_main|is_primary|is_master|master_process|gpu", re.IGNORECASE)
STEPS_SCHEDULER = re.compile(r"^(step_\w*sched\w*|\w*sched\w*_step)$", re.IGNORECASE)


class SchedulerStepOnOneRank(Rule):
    """The learning-rate scheduler stepped only under a rank test (`if
    args.local_rank == 0: scheduler.step(epoch)`): every rank has its own
    optimizer and scheduler, so the other ranks keep the learning rate they
    started with while rank 0's decays. DDP averages the gradients but each
    rank applies them with its own rate, and the replicas' weights drift
    apart from the first step the rates differ (rank 0 saves a model the
    others no longer match). Asked for by issue 41's lint heldout20 (u022:
    `scheduler.step(epoch)` with rank 0's checkpoint save; u055: the
    plateau scheduler stepped on validation AUC on rank 0) and heldout13
    (u015: ReduceLROnPlateau.step on rank 0).

    Flagged: in a distributed script (it starts a process group, spawns
    workers or wraps a model in DDP), `X.step(...)` where `X` names a
    scheduler (`scheduler`, `lr_scheduler`, `self.sched`), or a method
    named for stepping one (`step_scheduler`, `scheduler_step`), whose
    statement runs under a test of the rank in its function, written there
    (`rank == 0`, `is_main_process(rank)`). Not flagged: a step on every
    rank; a step under a test that is not the rank's (`if self.scheduler is
    not None:`, lint heldout16 u013).

    A warning: the file shows one rank stepping, not whether the ranks'
    optimizers are the ones that train (a rank-0-only evaluation model
    with its own scheduler would be fine).
    """

    id = "scheduler-step-on-one-rank"
    message = ("the learning-rate scheduler steps on one rank only: the other ranks keep their old learning "
               "rate and the DDP replicas drift apart")
    fix = "step the scheduler on every rank (outside `if rank == 0:`); for a metric-driven one, all_reduce the " \
          "metric first or broadcast rank 0's value"
    needles = ("sched",)

    VALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")
        for epoch in range(10):
            train(model, optimizer)
            scheduler.step()
            if dist.get_rank() == 0:
                save(model)
        ''',
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")
        for epoch in range(10):
            train(model, optimizer)
            if epoch > warmup:
                scheduler.step()
        ''',
    )
    INVALID = (
        '''
        import torch.distributed as dist

        dist.init_process_group("nccl")
        for epoch in range(10):
            train(model, optimizer)
            if dist.get_rank() == 0:
                scheduler.step(epoch)  # flagged
                save(model)
        ''',
    )

    def check(self, file: FileModel) -> Iterator[Hit]:
        steps = [c for c in file.calls if self._steps_scheduler(c)]
        if not steps or not is_distributed_program(file):
            return
        for call in steps:
            tests = [t for t in file.conditions(call)
                     if file.is_rank_test(t) and READS_RANK.search(ast.unparse(t)) and not SCHEDULER.search(ast.unparse(t))]
            if not tests:
                continue
            yield Hit(call, message=f"{source(call)} runs only under `{source(tests[0])}`: the other ranks keep "
                      "their old learning rate while this one's changes, and the DDP replicas drift apart")

    @staticmethod
    def _steps_scheduler(call: ast.Call) -> bool:
        func = call.func
        if type(func) is not ast.Attribute:
            return False
        if func.attr == "step":
            return bool(SCHEDULER.search(terminal_name(func.value)))
        return bool(STEPS_SCHEDULER.match(func.attr))
