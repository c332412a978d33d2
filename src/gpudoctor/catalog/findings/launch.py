"""Findings in the area "launch": starting and meeting ranks."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "launch"
EMITTED_BY = "[`gpudoctor allreduce`](../commands/allreduce.md) and `gpudoctor train-smoke` in join mode (under torchrun, SLURM or plain `RANK`/`WORLD_SIZE`/`MASTER_ADDR`/`MASTER_PORT`)"


RENDEZVOUS_INCOMPLETE = FindingKind(
    id="rendezvous-incomplete",
    title="only {joined} of {world} ranks came to {address} within {waited:.0f} s: {missing} missing",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""Rank 0 of a job waited at `MASTER_ADDR:MASTER_PORT` for the whole `--timeout` and not every
rank came. Each rank checks in on the rendezvous store before `init_process_group`, so rank 0 can
name the ranks that joined and those missing; while it waits it prints
*waiting at HOST:PORT for N of M ranks, T s* on stderr.""",
    evidence="`address`, `joined` and `missing` (rank numbers), `waited_s`, `launched by` (`torchrun`, `slurm`, `env`).",
    why="Every rank must reach MASTER_ADDR:MASTER_PORT before any can start. The usual causes: the other nodes' ranks were not started (or started later than the timeout), they were given another MASTER_ADDR or MASTER_PORT, or a firewall between the nodes blocks the port.",
    fix="start the missing ranks with the same MASTER_ADDR/MASTER_PORT ({address}); from another node check the port is reachable: nc -zv {host} {port}",
)


RENDEZVOUS_STORE_SILENT = FindingKind(
    id="rendezvous-store-silent",
    title="{message}",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) and `gpudoctor train-smoke` in join mode, on a rank that connects to the job's store (every rank but 0, and rank 0 under torchrun's agent); a rank other than 0 says it in one line on stderr",
    summary="""A joining rank waited its whole `--timeout` at `MASTER_ADDR:MASTER_PORT` and no TCPStore answered.
gpudoctor then tries the port once more: when something accepts the connection, another program
holds the port (a clash with another job, a service); when nothing does, no store was started there.
torch's own client would wait without end in the first case.""",
    evidence="`address`, `waited_s`, `port accepts connections` (true: something else answers there).",
    why="Every rank must reach the store that rank 0 (or torchrun's agent) hosts at MASTER_ADDR:MASTER_PORT; a port that another program holds accepts connections and never answers as a store.",
    fix="see what holds the port on {host}: ss -ltnp 'sport = :{port}'; give every rank a free MASTER_PORT",
)


RANKS_OUTNUMBER_CORES = FindingKind(
    id="ranks-outnumber-cores",
    title="{nproc} ranks on {cores} CPU {cores_word}: {per_core:.0f} ranks per core",
    severity=Severity.WARN,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke` (in the report) and `gpudoctor run --nproc` (on stderr before the ranks start)",
    summary="The ranks to start on this machine are 4 or more per CPU core this process may use (`taskset` and cgroup cpusets count). `--nproc` itself is limited to 256 for every command.",
    evidence="`ranks`, `usable cores`, `limit`.",
    why="Every rank is a whole Python process with torch's own threads; this many per core spend their time waiting for the CPU, so timings are the scheduler's, and timeouts can fire on a healthy job.",
    fix="gpudoctor {command} --nproc {suggested}  # at most one rank per core (or per GPU)",
)


TEMP_FOLDER_REFUSED = FindingKind(
    id="temp-folder-refused",
    title="{path} was not used: it {reason}",
    severity=Severity.WARN,
    area=AREA,
    emitted_by="`gpudoctor train-smoke` in join mode (under torchrun or SLURM); `gpudoctor run` under torchrun says the same on stderr",
    summary="""A folder gpudoctor would use under the shared temp folder (`/tmp/gpudoctor-smoke-<job>`,
`/tmp/gpudoctor-run-<job>-<port>`) is already there and is not safely this user's: a symbolic link,
a file, another user's folder, or one others may write to. gpudoctor used a fresh private folder
instead (docs/security.md).""",
    evidence="`folder`, `problem`, `used instead`.",
    why="gpudoctor's folders in the shared temp folder have names every rank of a job can compute, so another user of this machine can create one first: a link there would make the job write over the files it points to, a folder of theirs would let them read or replace what the job writes. A fresh private folder was used instead.",
    fix="ls -ld {path}   # remove it if it is yours; or: gpudoctor {rerun}",
)
