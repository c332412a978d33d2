"""Join mode or local ranks: what the launcher variables in the environment
(RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, SLURM's) make a rank command do,
decided before any work starts.

A shell left over from a torchrun job, a typo in a variable, a MASTER_ADDR that
does not resolve: each is a finding naming the variable, its value and what
gpudoctor made of it, never a traceback or a wait until a timeout.
`join_decision` is pure; `read_join_env` gathers the facts it needs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from gpudoctor.catalog.findings.environment import (
    DISTRIBUTED_ENV_IGNORED,
    DISTRIBUTED_ENV_INCOMPLETE,
    DISTRIBUTED_ENV_MALFORMED,
    SLURM_RENDEZVOUS_DERIVED,
)
from gpudoctor.checks.environment import master_findings
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.launch import rundir
from gpudoctor.launch.slurm_env import PORT_BASE, SlurmRendezvous, slurm_rendezvous
from gpudoctor.probe.environment import EnvironmentFacts, probe_environment

AREA = "environment"
RANK_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
SLURM_VARS = ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")


@dataclass(frozen=True)
class JoinDecision:
    join: bool  # run this process as one rank of a torchrun/SLURM/env:// job
    findings: tuple[Finding, ...] = ()  # an error among them: stop before any work
    # variables to set before joining: an srun step's MASTER_ADDR/MASTER_PORT (launch/slurm_env.py)
    exports: tuple[tuple[str, str], ...] = ()

    @property
    def blocked(self) -> bool:
        return any(f.severity is Severity.ERROR for f in self.findings)


def read_join_env(command: str, nproc_given: bool, environ: Mapping[str, str] | None = None) -> JoinDecision:
    """The decision for this process's environment. MASTER_ADDR is looked up
    (with a deadline) only when a join is on the cards. The rendezvous an srun
    step derives is set in this process's environment (when it is the one read),
    where torch's env:// and the rendezvous look for it."""
    env = os.environ if environ is None else environ
    if not any(name in env for name in ("RANK", "WORLD_SIZE", "SLURM_PROCID")):
        return JoinDecision(join=False)
    decision = join_decision(probe_environment(env), command, nproc_given)
    if environ is None:
        for name, value in decision.exports:
            os.environ.setdefault(name, value)
    return decision


def _integer(value: str | None, low: int) -> int | None:
    text = (value or "").strip()
    if text.isdigit() and int(text) >= low:
        return int(text)
    return None


def _launcher(v: dict[str, str]) -> str:
    if rundir.RUN_DIR_ENV in v:
        return "gpudoctor"
    return "torchrun" if "TORCHELASTIC_RUN_ID" in v else "env"


def join_decision(facts: EnvironmentFacts, command: str, nproc_given: bool) -> JoinDecision:
    v = facts.variables
    if "RANK" not in v and "WORLD_SIZE" not in v:
        return _slurm_decision(v, command)
    seen = {k: v[k] for k in (*RANK_VARS, "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID") if k in v}
    launcher = _launcher(v)
    if "RANK" not in v or "WORLD_SIZE" not in v:
        missing = "WORLD_SIZE" if "RANK" in v else "RANK"
        return JoinDecision(False, (_ignored(seen, f"{missing} is not set, so there is no job to join"),))
    if nproc_given and launcher == "env":
        return JoinDecision(False, (_ignored(seen, "--nproc was given: gpudoctor starts its own ranks"),))
    rank, world, problems = _rank_numbers(v)
    if problems or rank is None or world is None:
        return JoinDecision(False, (_malformed(command, seen, problems, launcher),))
    absent = [k for k in ("MASTER_ADDR", "MASTER_PORT") if k not in v]
    if absent and world > 1:
        return JoinDecision(False, (_incomplete(command, seen, absent, rank, world),))
    return JoinDecision(True, tuple(master_findings(facts)) if world > 1 else ())


def _rank_numbers(v: dict[str, str]) -> tuple[int | None, int | None, dict[str, str]]:
    """(RANK, WORLD_SIZE, what is wrong with them and LOCAL_*: variable -> why)."""
    rank, world = _integer(v["RANK"], 0), _integer(v["WORLD_SIZE"], 1)
    problems: dict[str, str] = {}
    if rank is None:
        problems["RANK"] = f"{v['RANK']!r} is not a rank number (0, 1, ...)"
    if world is None:
        problems["WORLD_SIZE"] = f"{v['WORLD_SIZE']!r} is not a number of ranks (1, 2, ...)"
    if rank is not None and world is not None and rank >= world:
        problems["RANK"] = f"{rank} is not below WORLD_SIZE={world}"
    for name in ("LOCAL_RANK", "LOCAL_WORLD_SIZE"):
        if name in v and _integer(v[name], 0 if name == "LOCAL_RANK" else 1) is None:
            problems[name] = f"{v[name]!r} is not a number"
    return rank, world, problems


def _slurm_decision(v: dict[str, str], command: str) -> JoinDecision:
    if "SLURM_PROCID" not in v or "SLURM_NTASKS" not in v:
        return JoinDecision(False)
    seen = {k: v[k] for k in SLURM_VARS if k in v}
    problems = {k: f"{v[k]!r} is not a number" for k in SLURM_VARS if k in v and _integer(v[k], 0) is None}
    if problems:
        return JoinDecision(False, (_malformed(command, seen, problems, "slurm"),))
    rank, world = int(v["SLURM_PROCID"]), int(v["SLURM_NTASKS"])
    if world < 2:
        return JoinDecision(False)
    absent = [k for k in ("MASTER_ADDR", "MASTER_PORT") if not v.get(k)]
    if not absent:
        return JoinDecision(True)
    meet = slurm_rendezvous(v)
    if meet is None:  # no step, node list or job id to derive them from: never a KeyError later
        return JoinDecision(False, (_incomplete(command, seen, absent, rank, world, "slurm"),))
    exports = tuple((k, meet.addr if k == "MASTER_ADDR" else str(meet.port)) for k in absent)
    return JoinDecision(True, (_derived(meet, dict(exports)),), exports)


def _derived(meet: SlurmRendezvous, exports: dict[str, str]) -> Finding:
    where = f"{exports.get('MASTER_ADDR', '$MASTER_ADDR')}:{exports.get('MASTER_PORT', '$MASTER_PORT')}"
    evidence = {
        **exports,
        meet.nodelist_var: meet.nodelist,
        "SLURM_JOB_ID": meet.job_id,
        "rule": f"the first host of the step's node list; port {PORT_BASE} + the last 4 digits of the job id (as Lightning's SLURMEnvironment)",
    }
    return SLURM_RENDEZVOUS_DERIVED(evidence=evidence, names=" and ".join(exports), where=where,
                                    exports=" ".join(f"{k}={v}" for k, v in exports.items()))


def _ignored(seen: dict[str, str], reason: str) -> Finding:
    evidence = {**seen, "gpudoctor": f"ran its own local ranks ({reason})"}
    return DISTRIBUTED_ENV_IGNORED(evidence=evidence, seen=_shown(seen), reason=reason)


def _malformed(command: str, seen: dict[str, str], problems: dict[str, str], launcher: str) -> Finding:
    evidence = {
        **seen,
        "problems": [f"{k}: {p}" for k, p in problems.items()],
        "gpudoctor": f"would join as one rank of a {launcher} job, but cannot read its place in it; nothing was run",
    }
    return DISTRIBUTED_ENV_MALFORMED(evidence=evidence, values=", ".join(f"{k}={seen[k]!r}" for k in problems),
                                     problems="; ".join(problems.values()), command=command)


def _incomplete(command: str, seen: dict[str, str], missing: list[str], rank: int, world: int, case: str = "join") -> Finding:
    evidence = {
        **seen,
        "missing": missing,
        "gpudoctor": f"would join as rank {rank} of {world}, but there is no rendezvous address; nothing was run",
    }
    return DISTRIBUTED_ENV_INCOMPLETE(case=case, severity=Severity.ERROR, evidence=evidence, rank=rank, world=world, missing=" or ".join(missing), command=command)


def _shown(seen: dict[str, str]) -> str:
    return " ".join(f"{k}={seen[k]}" for k in RANK_VARS if k in seen)
