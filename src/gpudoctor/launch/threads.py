"""CPU threads per rank: what torchrun does about OMP_NUM_THREADS, done once for
every rank gpudoctor starts, and the one line that says what the ranks ran with.

Several ranks on one machine each start torch with as many intra-op threads as
there are cores: N ranks then run N x cores threads, and the step times measure
the contention, not the job. torchrun sets OMP_NUM_THREADS=1 for its workers when
it starts more than one and the user has not set the variable; so does gpudoctor.
"""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

OMP_ENV = "OMP_NUM_THREADS"
BY_GPUDOCTOR, BY_USER = "gpudoctor", "user"  # who chose the value the ranks ran with ("": nobody)


def set_rank_threads(env: MutableMapping[str, str], nproc: int) -> tuple[str, str]:
    """Give the ranks' environment OMP_NUM_THREADS=1 as torchrun does (more than one
    rank, the user's value untouched). (value, set_by): the value the ranks get
    ("" when unset) and BY_GPUDOCTOR, BY_USER or "" (unset: one rank, as torchrun)."""
    if OMP_ENV in env:
        return env[OMP_ENV], BY_USER
    if nproc > 1:
        env[OMP_ENV] = "1"
        return "1", BY_GPUDOCTOR
    return "", ""


def threads_data(value: str, set_by: str, per_rank: Sequence[int | None]) -> dict:
    """The JSON `threads` object of a command that started ranks (docs/json.md)."""
    return {"omp_num_threads": value or None, "set_by": set_by or None, "per_rank": list(per_rank)}


def threads_line(data: dict | None) -> str:
    """One line: the OMP_NUM_THREADS the ranks ran with, who set it, and the torch
    threads each rank reported. "" without data (no ranks were started here)."""
    if not data:
        return ""
    value, by = data.get("omp_num_threads"), data.get("set_by")
    if by == BY_GPUDOCTOR:
        line = f"ranks ran with {OMP_ENV}={value} (set by gpudoctor, as torchrun does)"
    elif by == BY_USER:
        line = f"ranks ran with {OMP_ENV}={value} (yours)"
    else:
        line = f"one rank: {OMP_ENV} left unset (as torchrun does), torch's own default"
    counts = data.get("per_rank") or []
    if any(n is not None for n in counts):
        line += "; torch threads per rank: " + ", ".join("?" if n is None else str(n) for n in counts)
    return line
