"""Findings in the area "launch": starting and meeting ranks."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="rendezvous-incomplete",
        severity="error",
        area="launch",
        emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) and `gpudoctor train-smoke` in join mode (under torchrun, SLURM or plain `RANK`/`WORLD_SIZE`/`MASTER_ADDR`/`MASTER_PORT`)",
        summary="""Rank 0 of a job waited at `MASTER_ADDR:MASTER_PORT` for the whole `--timeout` and not every
rank came. Each rank checks in on the rendezvous store before `init_process_group`, so rank 0 can
name the ranks that joined and those missing; while it waits it prints
*waiting at HOST:PORT for N of M ranks, T s* on stderr.""",
        evidence="`address`, `joined` and `missing` (rank numbers), `waited_s`, `launched by` (`torchrun`, `slurm`, `env`).",
        why="No collective can start until every rank has joined. The usual causes: the other nodes' ranks were not started (or started later than the timeout), they were given another `MASTER_ADDR` or `MASTER_PORT`, or a firewall between the nodes blocks the port.",
        fix="""Start the missing ranks with the same address, and check from another node that the port is reachable:

```sh
MASTER_ADDR=node0 MASTER_PORT=29500 RANK=1 WORLD_SIZE=2 gpudoctor allreduce
nc -zv node0 29500
```""",
        says="Every rank must reach MASTER_ADDR:MASTER_PORT before any can start. The usual causes: the other nodes' ranks were not started (or started later than the timeout), they were given another MASTER_ADDR or MASTER_PORT, or a firewall between the nodes blocks the port.",
        does="start the missing ranks with the same MASTER_ADDR/MASTER_PORT ({address}); from another node check the port is reachable: nc -zv {host} {port}",
    ),
    FindingDoc(
        id="rendezvous-store-silent",
        severity="error",
        area="launch",
        emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) and `gpudoctor train-smoke` in join mode, on a rank that connects to the job's store (every rank but 0, and rank 0 under torchrun's agent); a rank other than 0 says it in one line on stderr",
        summary="""A joining rank waited its whole `--timeout` at `MASTER_ADDR:MASTER_PORT` and no TCPStore answered.
gpudoctor then tries the port once more: when something accepts the connection, another program
holds the port (a clash with another job, a service); when nothing does, no store was started there.
torch's own client would wait without end in the first case.""",
        evidence="`address`, `waited_s`, `port accepts connections` (true: something else answers there).",
        why="Every rank must reach the store that rank 0 (or torchrun's agent) hosts at MASTER_ADDR:MASTER_PORT. A port that another program holds accepts the connection and never answers as a store; a port where nothing listens means rank 0 is not up, or is at another address or port.",
        fix="""See what holds the port on the master node, and give the job a free one:

```sh
ss -ltnp 'sport = :29500'
MASTER_PORT=29511 RANK=1 WORLD_SIZE=2 MASTER_ADDR=node0 gpudoctor allreduce
```""",
        says="Every rank must reach the store that rank 0 (or torchrun's agent) hosts at MASTER_ADDR:MASTER_PORT; a port that another program holds accepts connections and never answers as a store.",
        does="see what holds the port on {host}: ss -ltnp 'sport = :{port}'; give every rank a free MASTER_PORT",
    ),
    FindingDoc(
        id="ranks-outnumber-cores",
        severity="warn",
        area="launch",
        emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke` (in the report) and `gpudoctor run --nproc` (on stderr before the ranks start)",
        summary="The ranks to start on this machine are 4 or more per CPU core this process may use (`taskset` and cgroup cpusets count). `--nproc` itself is limited to 256 for every command.",
        evidence="`ranks`, `usable cores`, `limit`.",
        why="Every rank is a whole Python process with torch's own threads; this many per core wait for the CPU, so timings are the scheduler's, and timeouts can fire on a healthy job.",
        fix="""At most one rank per core (or per GPU):

```sh
gpudoctor allreduce --nproc 2
```""",
        says="Every rank is a whole Python process with torch's own threads; this many per core spend their time waiting for the CPU, so timings are the scheduler's, and timeouts can fire on a healthy job.",
        does="gpudoctor {command} --nproc {nproc}  # at most one rank per core (or per GPU)",
    ),
    FindingDoc(
        id="temp-folder-refused",
        severity="warn",
        area="launch",
        emitted_by="`gpudoctor train-smoke` in join mode (under torchrun or SLURM); `gpudoctor run` under torchrun says the same on stderr",
        summary="""A folder gpudoctor would use under the shared temp folder (`/tmp/gpudoctor-smoke-<job>`,
`/tmp/gpudoctor-run-<job>-<port>`) is already there and is not safely this user's: a symbolic link,
a file, another user's folder, or one others may write to. gpudoctor used a fresh private folder
instead (docs/security.md).""",
        evidence="`folder`, `problem`, `used instead`.",
        why="The names are ones every rank of a job computes alike, so another user of the machine can create one first: through a link the job would write over the files it points to; in a folder of theirs they could read or replace the checkpoint.",
        fix="""Look at it, and remove it if it is yours; or name a path of your own:

```sh
ls -ld /tmp/gpudoctor-smoke-*
gpudoctor train-smoke --save $HOME/smoke.pt
```""",
        says="gpudoctor's folders in the shared temp folder have names every rank of a job can compute, so another user of this machine can create one first: a link there would make the job write over the files it points to, a folder of theirs would let them read or replace what the job writes. A fresh private folder was used instead.",
        does="ls -ld {path}   # remove it if it is yours; or: gpudoctor {rerun}",
    ),
)
