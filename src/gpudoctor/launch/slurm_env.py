"""Where the ranks of an `srun` step meet when the batch script exported no
MASTER_ADDR / MASTER_PORT: the first host of the step's node list, and a port
from the job id, as users of Lightning expect. Pure: an environment mapping in,
an answer out.

Lightning's SLURMEnvironment (lightning_fabric/plugins/environments/slurm.py)
takes the first host of SLURM_NODELIST for MASTER_ADDR and, for MASTER_PORT,
15000 plus the last four digits of SLURM_JOB_ID (12910 without a job id), and
keeps either variable when the user set it. gpudoctor does the same, with the
step's node list first (SLURM_STEP_NODELIST: the nodes this srun runs on), so a
job that mixes gpudoctor and a Lightning script meets on the same port.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

NODELIST_VARS = ("SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST")
PORT_BASE = 15000  # Lightning's: every port in the 15000-24999 range
MAX_HOSTS = 100_000  # a node list that expands to more is not a real one
_RANGE = re.compile(r"^(?P<low>\d+)(?:-(?P<high>\d+))?$")


@dataclass(frozen=True)
class SlurmRendezvous:
    addr: str
    port: int
    nodelist_var: str  # the variable the address came from
    nodelist: str  # its value
    job_id: str

    def exports(self) -> str:
        """The two lines a batch script adds to say the same itself."""
        return f"export MASTER_ADDR={self.addr} MASTER_PORT={self.port}"


def expand_hostlist(spec: str) -> list[str]:
    """Slurm's hostlist syntax expanded: "node[01-03,07],gpu-a" -> node01, node02,
    node03, node07, gpu-a (zero padding kept; several bracket groups in one name
    multiply). ValueError for a list that is not one."""
    hosts: list[str] = []
    for name in _split_top(spec.strip()):
        expanded = [""]
        for text, group in _pieces(name):
            choices = [text] if group is None else [text + n for n in _numbers(group)]
            expanded = [e + c for e in expanded for c in choices]
            if len(expanded) + len(hosts) > MAX_HOSTS:
                raise ValueError(f"node list {spec!r} expands to more than {MAX_HOSTS} hosts")
        hosts += expanded
    if not hosts or any(not h for h in hosts):
        raise ValueError(f"{spec!r} is not a Slurm node list")
    return hosts


def _split_top(spec: str) -> list[str]:
    """The names of a node list: split at the commas outside brackets."""
    names, depth, start = [], 0, 0
    for i, ch in enumerate(spec):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"{spec!r} closes a bracket it did not open")
        elif ch == "," and depth == 0:
            names.append(spec[start:i])
            start = i + 1
    if depth:
        raise ValueError(f"{spec!r} leaves a bracket open")
    names.append(spec[start:])
    return [n.strip() for n in names]


def _pieces(name: str) -> list[tuple[str, str | None]]:
    """"a[1-2]b[3]" -> [("a", "1-2"), ("b", "3")], then ("", None) for a plain tail."""
    out: list[tuple[str, str | None]] = []
    rest = name
    while "[" in rest:
        head, _, tail = rest.partition("[")
        group, _, rest = tail.partition("]")
        out.append((head, group))
    if rest or not out:
        out.append((rest, None))
    return out


def _numbers(group: str) -> list[str]:
    out = []
    for part in group.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            raise ValueError(f"[{group}] is not a list of numbers or ranges")
        low, high = m["low"], m["high"] or m["low"]
        width = len(low)
        if not 0 <= int(high) - int(low) < MAX_HOSTS:
            raise ValueError(f"[{group}] has a range that runs backwards or past {MAX_HOSTS} hosts")
        out += [str(n).zfill(width) for n in range(int(low), int(high) + 1)]
    return out


def in_step(env: Mapping[str, str]) -> bool:
    """Whether this process is a task of an srun step (a batch script's own shell
    carries SLURM_PROCID=0 and SLURM_NTASKS too, but no step)."""
    return any(k in env for k in ("SLURM_STEP_ID", "SLURM_STEPID", "SLURM_STEP_NODELIST"))


def slurm_rendezvous(env: Mapping[str, str]) -> SlurmRendezvous | None:
    """Where an srun step's ranks meet, from its environment; None outside a step,
    or when a node list or a numeric job id is missing (then the batch script must
    export MASTER_ADDR and MASTER_PORT)."""
    if not in_step(env):
        return None
    job_id = env.get("SLURM_JOB_ID", "").strip()
    found = next(((var, env[var]) for var in NODELIST_VARS if env.get(var, "").strip()), None)
    if found is None or not job_id.isdigit():
        return None
    var, nodelist = found
    try:
        first = expand_hostlist(nodelist)[0]
    except ValueError:
        return None
    return SlurmRendezvous(first, PORT_BASE + int(job_id[-4:]), var, nodelist, job_id)
