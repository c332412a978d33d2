"""Rank programs for tests/controls/test_controls_honest.py (imported in the child
ranks, which get this folder on PYTHONPATH)."""

import time


def keeps_reducing(ctx, config):
    """Join a gloo group and all-reduce every few milliseconds until stopped: a job
    that is still moving when its watchdog fires."""
    import torch

    dist = ctx.init_process_group("gloo", timeout_s=60)
    t = torch.ones(4)
    step = 0
    while True:
        dist.all_reduce(t)
        step += 1
        ctx.progress("train", step)
        time.sleep(config.get("pause", 0.02))


def barrier_on_rank0(ctx, config):
    """A few all-reduces, then rank 0 enters a barrier that rank 1 never reaches: a hang."""
    import torch

    dist = ctx.init_process_group("gloo", timeout_s=60)
    for _ in range(3):
        dist.all_reduce(torch.ones(4))
    if ctx.rank == 0:
        dist.barrier()
    while True:
        time.sleep(1)
