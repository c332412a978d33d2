"""The rank side of the launcher: who am I, heartbeats, and injected faults.

A rank learns its place from the environment, the same variables torchrun sets
(RANK, WORLD_SIZE, LOCAL_RANK, ...), or SLURM's when it started the job. It tells
the supervisor how far it got through a small progress file, which is how a hang
is told apart from a peer waiting on the hung one.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from gpudoctor.launch.scratch import write_file

# Stages every rank passes through, in order; later stages are command-specific.
STAGE_STARTED = "started"  # the process is up: Python, then `import torch`
STAGE_SCRIPT = "script"  # `run`: the user's script runs (torch maybe not imported yet)
STAGE_IMPORTED = "imported"  # torch is imported: the rank's own code runs
STAGE_RENDEZVOUS = "rendezvous"
STAGE_JOINED = "joined"
# A rank in these is still starting: on a busy machine importing torch alone takes
# seconds. It is neither hung nor missing from the rendezvous, only slow to start.
STARTING_STAGES = ("", STAGE_STARTED, STAGE_SCRIPT)
# (STAGE_SCRIPT counts as starting for the watchdogs: the code before `import torch`
# and a crawling import are not told apart by the stage; the finding words it by the
# stage it saw, hang/failures.py.)
PRE_JOIN_STAGES = (*STARTING_STAGES, STAGE_IMPORTED)
# With startup_grace, the time until every rank has started (Python up, torch imported)
# is not counted against the watchdog, up to this much: on a busy machine the import
# alone takes tens of seconds, and a rank that is importing is not hung. Here, not in
# supervisor.py, so that the hang doctor's watch (which a rank of torchrun runs) can
# read it without importing the supervisor.
STARTUP_LIMIT_S = 300.0

# Spelled here, not imported from launch/rundir.py (which names them): this module is on
# every rank's start-up path (hooks/main.py imports it before anything else, to answer
# SIGUSR1 at once), and rundir imports the collectives' knowledge. tests/test_rundir_names.py
# checks that these are rundir's names.
FAULT_ENV = "GPUDOCTOR_FAULT"  # rundir.FAULT_ENV
RUN_DIR_ENV = "GPUDOCTOR_RUN_DIR"  # rundir.RUN_DIR_ENV
PROGRESS = ".progress"  # rundir.PROGRESS
DEFAULT_JOIN_TIMEOUT_S = 1800.0  # torch's own default process-group timeout


class InjectedFault(RuntimeError):
    """Raised by the `raise` fault kind: what a bug in a rank looks like."""


def adopt_fault(spec: str | None, environ: dict[str, str] | os._Environ = os.environ) -> str:
    """The one way to inject a fault: a command's hidden `--fault SPEC` (a test hook). It
    is put in this process's environment for the ranks it starts (or, joined, for this
    rank itself); a GPUDOCTOR_FAULT inherited from elsewhere (a shell, a job script) is
    dropped, never acted on, and returned so that the report can say it was ignored."""
    inherited = environ.pop(FAULT_ENV, "")
    if spec:
        environ[FAULT_ENV] = spec
    return inherited if inherited != spec else ""


def parse_faults(spec: str | None) -> dict[int, str]:
    """`GPUDOCTOR_FAULT="1:hang,0:wrong"` -> {1: "hang", 0: "wrong"}; bad entries are ignored."""
    faults: dict[int, str] = {}
    for entry in (spec or "").split(","):
        rank, _, kind = entry.strip().partition(":")
        if rank.strip().isdigit() and kind.strip():
            faults[int(rank)] = kind.strip()
    return faults


def answer_stack_signal() -> None:
    """Every rank the supervisor starts (`launch_function`'s and `run --nproc`'s, and
    the processes they spawn, which share the rank's process group): a native crash
    prints the Python stack, and SIGUSR1, which the supervisor's watchdog sends to
    the rank's process group before stopping it, prints every thread's stack instead
    of killing the process (SIGUSR1's default action)."""
    import faulthandler

    if not faulthandler.is_enabled():
        faulthandler.enable()
    if hasattr(faulthandler, "register"):  # not on Windows (no SIGUSR1 there either)
        faulthandler.register(signal.SIGUSR1, all_threads=True)
        # a process started under held_stack_signal() begins with SIGUSR1 blocked: it may
        # come now (a request that arrived meanwhile is answered here)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})


@contextmanager
def held_stack_signal() -> Iterator[None]:
    """Around the start of a rank's own children (DataLoader workers under spawn): SIGUSR1
    blocked in this thread, so the children begin with it blocked (the mask survives fork
    and exec) until answer_stack_signal() sets their handler and unblocks it. Without it, the
    watchdog's request to the process group killed a worker still importing (SIGUSR1's
    default action), and the rank failed of "worker exited unexpectedly" instead of being
    shown where it stood. The rank's own request waits here and is answered on the way out."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no SIGUSR1, nothing to hold
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def progress_path(run_dir: str, rank: int) -> str:
    return os.path.join(run_dir, f"rank{rank}{PROGRESS}")  # rundir.progress_path


def read_progress(run_dir: str, rank: int) -> tuple[int, str]:
    """(step, stage) last written by a rank; (-1, "") before its first heartbeat."""
    from gpudoctor.core.user_file import open_regular

    try:
        # A heartbeat is a line: more than 4 KB is not one (and a FIFO or a device there
        # is refused by open_regular, never waited on).
        with open_regular(progress_path(run_dir, rank)) as fh:
            step, _, stage = fh.read(4096).decode("utf-8", "replace").partition("\t")
        return int(step), stage.strip()[:200]
    except (OSError, ValueError):  # FileRefused is a ValueError
        return -1, ""


@dataclass
class RankContext:
    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    run_dir: str | None = None
    fault: str | None = None
    joined_by: str = "gpudoctor"  # "gpudoctor" (local launch), "torchrun" or "slurm"
    # Called once the process group is up (join mode: the nodes' comparison, launch/fleet.py).
    after_join: Callable[[], None] | None = None
    _step: int = 0
    # Joined mode: hears how the wait for the other ranks goes (launch/rendezvous.py).
    on_rendezvous_wait: Callable | None = None

    def progress(self, stage: str, step: int | None = None) -> None:
        """Heartbeat: a tiny atomic file write the supervisor polls. No-op in join mode."""
        self._step = self._step + 1 if step is None else step
        if not self.run_dir:
            return
        write_file(progress_path(self.run_dir, self.rank), f"{self._step}\t{stage}")

    def fault_point(self, stage: str) -> None:
        """Where the generic faults fire. Call it before the heartbeat of the step
        it guards, so that a hung rank is seen *behind* its peers."""
        if self.fault == "crash":
            # A native crash, as a segfault in a CUDA/NCCL library would look.
            os.kill(os.getpid(), signal.SIGSEGV)
        elif self.fault == "hang":
            _sleep_forever()
        elif self.fault == "raise":
            raise InjectedFault(f"injected fault on rank {self.rank} at {stage} ({FAULT_ENV})")

    def cuda_device(self):
        """Select this rank's GPU (its local rank, or the one GPU a launcher bound
        it to) as the current device, and return it."""
        import torch

        from gpudoctor.launch.backend import rank_device_index

        index = rank_device_index(self.local_rank, torch.cuda.device_count())
        torch.cuda.set_device(index)
        return torch.device("cuda", index)

    def init_process_group(self, backend: str, timeout_s: float | None = None):
        """init_process_group over env:// with heartbeats around the rendezvous."""
        import datetime

        import torch.distributed as dist

        if self.fault == "nojoin":
            _sleep_forever()  # never arrives: its peers wait in the rendezvous
        if backend == "nccl":
            self.cuda_device()  # one GPU per rank; without it every rank lands on cuda:0
        self.progress(STAGE_RENDEZVOUS, 0)
        kwargs: dict[str, Any] = {}
        if timeout_s:
            kwargs["timeout"] = datetime.timedelta(seconds=timeout_s)
        if self.run_dir is None and self.world_size > 1:
            # Joined: check in first, so that peers that never come are named, not waited on in silence.
            from gpudoctor.launch.rendezvous import meet

            wait_s = timeout_s or DEFAULT_JOIN_TIMEOUT_S
            kwargs["store"] = meet(self.rank, self.world_size, wait_s, self.joined_by, self.on_rendezvous_wait)
        dist.init_process_group(backend, rank=self.rank, world_size=self.world_size, **kwargs)
        self.progress(STAGE_JOINED, 0)
        if self.after_join is not None:
            self.after_join()
        return dist


def _sleep_forever() -> None:
    while True:
        time.sleep(3600)


def join_context(environ: dict[str, str] | None = None) -> RankContext | None:
    """The context of a rank started by torchrun or SLURM, or None when not under one.

    torchrun sets RANK/WORLD_SIZE/LOCAL_RANK/MASTER_ADDR. Under SLURM (srun), the
    SLURM_* variables give the place; MASTER_ADDR/MASTER_PORT come from the batch
    script or, where it exported none, from the step (join_env.read_join_env sets
    them before this is called; launch/slurm_env.py).
    """
    env = os.environ if environ is None else environ
    faults = parse_faults(env.get(FAULT_ENV))
    if "RANK" in env and "WORLD_SIZE" in env:
        rank = int(env["RANK"])
        world = int(env["WORLD_SIZE"])
        local = int(env.get("LOCAL_RANK", rank))
        local_world = int(env.get("LOCAL_WORLD_SIZE", world))
        if RUN_DIR_ENV in env:
            by = "gpudoctor"  # a rank of gpudoctor's own launcher
        else:
            by = "torchrun" if "TORCHELASTIC_RUN_ID" in env else "env"
        return RankContext(rank, world, local, local_world, env.get(RUN_DIR_ENV), faults.get(rank), by)
    if "SLURM_PROCID" in env and "SLURM_NTASKS" in env and int(env["SLURM_NTASKS"]) > 1:
        rank = int(env["SLURM_PROCID"])
        world = int(env["SLURM_NTASKS"])
        local = int(env.get("SLURM_LOCALID", 0))
        local_world = int(env.get("SLURM_NTASKS_PER_NODE", "1").split("(")[0] or 1)
        return RankContext(rank, world, local, local_world, None, faults.get(rank), "slurm")
    return None


def export_slurm_env(ctx: RankContext) -> None:
    """torch's env:// rendezvous reads RANK/WORLD_SIZE; give them SLURM's values."""
    os.environ.setdefault("RANK", str(ctx.rank))
    os.environ.setdefault("WORLD_SIZE", str(ctx.world_size))
    os.environ.setdefault("LOCAL_RANK", str(ctx.local_rank))
