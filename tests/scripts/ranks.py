"""Shared by the multi-rank test scripts: start `fn(rank, world_size, args)` on
2 gloo ranks, the way the script is launched. Under a launcher (gpudoctor run
--nproc, torchrun) RANK is set and this process is one rank; run plainly, the
script starts its ranks itself with mp.spawn on 127.0.0.1 and a free port."""

import os
import socket
import sys

import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spawned(rank, world_size, fn, args):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    _joined(fn, args)


def _joined(fn, args):
    dist.init_process_group("gloo")
    # Barriers: a rank that finished first must not tear the group down while
    # its peer is still connecting (gloo then fails with "closed by peer").
    dist.barrier()
    try:
        fn(dist.get_rank(), dist.get_world_size(), args)
    finally:
        dist.barrier()
        dist.destroy_process_group()


def say(line):
    """One write per line: the ranks share one stdout, and print() writes the
    text and its newline separately, so two ranks' lines would interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def start(fn, args=None, world_size=2):
    if "RANK" in os.environ:
        _joined(fn, args)
        return
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    mp.spawn(_spawned, args=(world_size, fn, args), nprocs=world_size, join=True)
