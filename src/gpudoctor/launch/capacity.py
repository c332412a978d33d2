"""How many ranks one machine may be asked to start, and when they crowd its
cores. The same limit and message for every command that starts ranks
(allreduce, train-smoke, run --nproc)."""

from __future__ import annotations

import os

from gpudoctor.catalog.findings.launch import RANKS_OUTNUMBER_CORES
from gpudoctor.core.findings import Finding

MAX_LOCAL_RANKS = 256
# Ranks per usable core above which a run measures mostly the scheduler: each
# rank is a full Python process with torch's own threads.
CROWDED_RANKS_PER_CORE = 4


def nproc_problem(nproc: int) -> str | None:
    """The usage error for an --nproc out of range, or None."""
    if 1 <= nproc <= MAX_LOCAL_RANKS:
        return None
    return f"--nproc must be between 1 and {MAX_LOCAL_RANKS} (got {nproc})"


def usable_cores() -> int:
    """Cores this process may run on (taskset, cgroup cpusets), not the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def crowded(command: str, nproc: int, cores: int) -> Finding | None:
    """A warning when the ranks outnumber the cores many times over."""
    if nproc < CROWDED_RANKS_PER_CORE * cores:
        return None
    evidence = {"ranks": nproc, "usable cores": cores, "limit": f"{CROWDED_RANKS_PER_CORE} ranks per core"}
    return RANKS_OUTNUMBER_CORES(evidence=evidence, nproc=nproc, cores=cores, cores_word="core" if cores == 1 else "cores",
                                 per_core=nproc / cores, command=command, suggested=max(1, cores))
