"""DataLoader workers under spawn: what each epoch pays to start them.

With `persistent_workers=False` (the default) every epoch starts W new worker
processes; under the spawn start method each one starts a fresh interpreter,
imports torch and unpickles the dataset before the first batch arrives. With
`persistent_workers=True` only the first epoch pays. This is the Lightning
"ddp_spawn and num_workers do not mix well" warning, measured instead of recited.

Bounded, so that it fits in --timeout on a small machine (each spawned worker
imports torch: seconds apiece when the cores are shared):
- persistent_workers=True is the training loop's own loader (rank.py makes it
  so): its first epoch's wait for the first batch was timed there, and only one
  more epoch is timed here, on the workers that are already up;
- persistent_workers=False starts W workers every epoch: its first epoch is
  always timed, later ones (up to cfg.worker_epochs) only while the measurement
  has used less than its budget.
"""

from __future__ import annotations

import time

from gpudoctor.commands.train_smoke.result import EpochTimes, WorkerStartup
from gpudoctor.launch.rank import answer_stack_signal, held_stack_signal

START_METHOD = "spawn"
BUDGET_SHARE = 0.25  # of --timeout: what the measurement may spend before it stops starting epochs


def worker_init(worker_id: int) -> None:
    """Each worker's first act. Workers share the rank's process group, to which the
    watchdog sends SIGUSR1 for stacks: without the rank's handler a worker would die
    of it, and the rank would raise "DataLoader worker is killed by signal" instead
    of showing where it hung."""
    answer_stack_signal()


def _timed_epoch(loader, sampler, epoch: int) -> tuple[float, float]:
    """(time to the first batch, time of the whole epoch)."""
    sampler.set_epoch(epoch)
    start = time.perf_counter()
    with held_stack_signal():  # a non-persistent loader starts its workers here, every epoch
        batches = iter(loader)
    next(batches, None)  # the first batch waits for the workers to come up
    first = time.perf_counter()
    for _ in batches:
        pass
    del batches
    return first - start, time.perf_counter() - start


def worker_startup(persistent_loader, first_batch_s: float, dataset, sampler, cfg) -> WorkerStartup:
    """Time to the first batch and whole-epoch time per epoch, persistent_workers off and on.
    `persistent_loader` is the training loop's loader (persistent_workers=True, its
    workers up); `first_batch_s` its first epoch's wait, timed by the training loop."""
    from torch.utils.data import DataLoader

    budget_end = time.monotonic() + BUDGET_SHARE * cfg.timeout_s
    later_start, later_epoch = _timed_epoch(persistent_loader, sampler, 1)
    loader = DataLoader(
        dataset,
        batch_size=cfg.batch_size,
        sampler=sampler,
        num_workers=cfg.num_workers,
        persistent_workers=False,
        multiprocessing_context=START_METHOD,
        worker_init_fn=worker_init,
    )
    off: list[tuple[float, float]] = []
    while len(off) < max(1, cfg.worker_epochs):
        off.append(_timed_epoch(loader, sampler, len(off)))
        # Another epoch only if it would end within the budget, judged by the last one.
        if time.monotonic() + off[-1][1] > budget_end:
            break
    del loader
    return WorkerStartup(
        num_workers=cfg.num_workers,
        start_method=START_METHOD,
        epochs=len(off),
        off=EpochTimes(tuple(s for s, _ in off), tuple(e for _, e in off)),
        # The first epoch's whole time is the training loop's (steps, not data): not counted here.
        on=EpochTimes((first_batch_s, later_start), (later_epoch,)),
    )
