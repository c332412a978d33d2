"""DataLoader workers under spawn: what each epoch pays to start them.

With `persistent_workers=False` (the default) every epoch starts W new worker
processes; under the spawn start method each one starts a fresh interpreter,
imports torch and unpickles the dataset before the first batch arrives. With
`persistent_workers=True` only the first epoch pays. This is the Lightning
"ddp_spawn and num_workers do not mix well" warning, measured instead of recited.
"""

from __future__ import annotations

import time

from gpudoctor.commands.train_smoke.result import EpochTimes, WorkerStartup

START_METHOD = "spawn"


def _timed_epochs(DataLoader, dataset, sampler, cfg, persistent: bool) -> EpochTimes:
    loader = DataLoader(
        dataset,
        batch_size=cfg.batch_size,
        sampler=sampler,
        num_workers=cfg.num_workers,
        persistent_workers=persistent,
        multiprocessing_context=START_METHOD,
    )
    startup, whole = [], []
    for epoch in range(cfg.worker_epochs):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        batches = iter(loader)
        next(batches, None)  # the first batch waits for the workers to come up
        first = time.perf_counter()
        for _ in batches:
            pass
        startup.append(first - start)
        whole.append(time.perf_counter() - start)
    del batches, loader  # persistent workers exit with their loader
    return EpochTimes(tuple(startup), tuple(whole))


def worker_startup(torch, dataset, sampler, cfg) -> WorkerStartup:
    """Per-epoch time to the first batch and whole-epoch time, persistent_workers off then on."""
    from torch.utils.data import DataLoader

    return WorkerStartup(
        num_workers=cfg.num_workers,
        start_method=START_METHOD,
        epochs=cfg.worker_epochs,
        off=_timed_epochs(DataLoader, dataset, sampler, cfg, persistent=False),
        on=_timed_epochs(DataLoader, dataset, sampler, cfg, persistent=True),
    )
