"""Tiny rank programs the launcher tests start (imported in the child ranks,
which get this folder on PYTHONPATH)."""

import os
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Summed:
    """What allreduce_sum returns (every rank function returns a frozen dataclass or None)."""

    sum: float
    pid: int


def allreduce_sum(ctx, config):
    """Join a gloo group, all-reduce the rank number, return the sum."""
    import torch

    dist = ctx.init_process_group("gloo", timeout_s=config.get("pg_timeout", 60))
    ctx.fault_point("all_reduce")
    ctx.progress("all_reduce", 1)
    t = torch.tensor([float(ctx.rank)])
    dist.all_reduce(t)
    dist.destroy_process_group()
    return Summed(t.item(), os.getpid())


def sleep_then_exit(ctx, config):
    """No process group: rank `config['bad']` exits with a code after a short sleep."""
    time.sleep(config.get("sleep", 0.1))
    if ctx.rank == config.get("bad"):
        os._exit(config.get("code", 7))
    return None


def spawn_grandchild(ctx, config):
    """Start a grandchild that would outlive its parent, then hang: teardown must take both."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    with open(os.path.join(config["dir"], f"grandchild{ctx.rank}.pid"), "w") as fh:
        fh.write(str(child.pid))
    ctx.progress("spawned", 1)
    time.sleep(600)


# A daemon the classic way: fork, setsid, fork again; the grandchild is in a session
# and process group of its own, and a child of init (or the nearest subreaper).
DAEMON = """
import os, sys, time
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
with open(sys.argv[1] + ".tmp", "w") as fh:
    fh.write(str(os.getpid()))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(600)
"""


def double_fork_daemon(ctx, config):
    """Start a daemon that leaves the rank's process group, then hang (or wait to be killed)."""
    import subprocess
    import sys

    pidfile = os.path.join(config["dir"], f"daemon{ctx.rank}.pid")
    subprocess.run([sys.executable, "-c", DAEMON, pidfile], check=True, timeout=60)
    ctx.progress("daemonized", 1)
    time.sleep(600)


def cuda_on_one_rank(ctx, config):
    """Rank 1 asks for a GPU that is not there (CUDA_VISIBLE_DEVICES="" in its environment):
    a real failure whose message the knowledge base knows; rank 0 then loses its peer."""
    import torch

    dist = ctx.init_process_group("gloo", timeout_s=config.get("pg_timeout", 60))
    if ctx.rank == 1:
        torch.zeros(1, device="cuda")
    t = torch.tensor([1.0])
    dist.all_reduce(t)
    return None


def returns_a_dict(ctx, config):
    """A rank function that breaks the contract: the rank reports it as its failure."""
    return {"rank": ctx.rank}


@dataclass(frozen=True)
class WrongCounts:
    """What every_op_and_dtype returns: wrong elements by "op dtype bytes"."""

    wrong: dict[str, int]


def every_op_and_dtype(ctx, config):
    """allreduce's own collectives (measure._Collective), every op in every dtype at
    the sizes given, in one gloo group: this rank's count of wrong elements for each."""
    import torch

    from gpudoctor.commands.allreduce.bandwidth import DTYPES, OPS, planned_sizes
    from gpudoctor.commands.allreduce.rank import _Collective

    dist = ctx.init_process_group("gloo", timeout_s=config.get("pg_timeout", 60))
    rank, world = dist.get_rank(), dist.get_world_size()
    wrong = {}
    for op in OPS:
        for dtype in DTYPES:
            for nbytes, count in planned_sizes(op, config["sizes"], dtype, world):
                coll = _Collective(torch, dist, op, count, rank, world, dtype, torch.device("cpu"))
                coll.reset()
                coll.call()
                wrong[f"{op} {dtype} {nbytes}"] = coll.wrong()
    dist.destroy_process_group()
    return WrongCounts(wrong)


def listening(ctx, config):
    """Print the addresses this rank listens on while the process group is up."""
    import json

    import psutil

    dist = ctx.init_process_group("gloo")
    dist.barrier()
    bound = sorted({c.laddr.ip for c in psutil.Process().net_connections("inet") if c.status == "LISTEN"})
    print("LISTEN " + json.dumps(bound), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def many_then_hang(ctx, config):
    """Every rank passes `config['n']` all-reduces; then rank `config['bad']` stops calling
    them (its own long work) while the others wait in the next one."""
    import torch

    dist = ctx.init_process_group("gloo", timeout_s=config.get("pg_timeout", 120))
    t = torch.ones(4)
    for _ in range(config["n"]):
        dist.all_reduce(t)
    if ctx.rank == config["bad"]:
        time.sleep(600)
    dist.all_reduce(t)
    return None
