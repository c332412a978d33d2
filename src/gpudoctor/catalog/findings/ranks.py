"""Findings in the area "ranks"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "ranks"
EMITTED_BY = "[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke`, `gpudoctor run` (every command that starts ranks)"


JOINED_RANK_FAILED = FindingKind(
    id="joined-rank-failed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) in join mode (under torchrun or SLURM)",
    summary="""Rank 0 of a torchrun/SLURM job failed while running the benchmark. The title says how:
*timed out waiting for a peer* (the process group's timeout, `--timeout`, passed in a
collective: a rank hung or never joined), *lost a peer* (a rank crashed), or the exception
it raised, and how many sizes had finished. Under a launcher each rank is its own process and rank 0 sees only its side: a
peer that crashed, hung or never joined shows here as a timeout or a closed connection.""",
    evidence="""`rank`, `world_size`, `launched by` (`torchrun`, `env`, `slurm`), `exception`, `traceback`;
`diagnosis` and `meaning` when the exception matches a known failure pattern
([docs/patterns/](../patterns/)).""",
    more_why="The benchmark did not complete; the cause is usually on another rank or node.",
    more_fix="""Read the launcher's output for the first rank that failed (torchrun prints each failed
rank's exit code and traceback), or run the benchmark on one node with every rank
supervised:

```sh
gpudoctor allreduce --nproc 8 --timeout 120
```""",
)


LAUNCH_INTERRUPTED = FindingKind(
    id="launch-interrupted",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke`, `gpudoctor run` (every command that starts ranks); exit code 130 (Ctrl-C), 143 (SIGTERM), 129 (SIGHUP)",
    summary="""Ctrl-C (SIGINT), SIGTERM or SIGHUP (an ssh session dropping) reached gpudoctor while ranks were running. It stopped every
rank (their whole process groups, so their own children too) before printing this.""",
    evidence="`ranks` (how many were stopped), `logs` (the run folder with each rank's stderr).",
    more_why="The measurement is incomplete; nothing is left running.",
    more_fix="Rerun the same command when ready.",
)


RANK_CRASHED = FindingKind(
    id="rank-crashed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A rank's process ended on its own with a non-zero exit code, or was killed by a signal
(named: `SIGSEGV`, `SIGKILL`, `SIGBUS`, `SIGABRT`, ...). The title says which rank and the
last stage it reached (`rendezvous`, `joined`, `all_reduce 4M`, ...).""",
    evidence="""`rank`, `state` (`exited` or `signaled`), `last_stage`, `step`, `exit_code`, `signal`, the
readable end of its stderr (`stderr_tail`, with the Python stack faulthandler printed on a
crash), and `log`: the rank's whole stderr file. When the rank's own output matches a known
failure pattern (the knowledge base `gpudoctor diagnose` uses), `diagnosis` holds the
pattern id ([docs/patterns/](../patterns/)) and `meaning` what it means; the title, why and
fix are then the pattern's own.""",
    more_why="""Its peers cannot finish a collective without it: they fail with *Connection closed by
peer* or wait until the watchdog. The signal points at the cause: `SIGKILL` from outside is
most often the kernel's OOM killer; `SIGSEGV` is a native crash in a C++ library: on a
machine with GPUs most often CUDA/NCCL (mismatched NCCL/CUDA/driver versions, a broken
build), on a machine without one a compiled extension built for another torch/numpy/Python
or a CPU kernel (the finding says which, from the GPUs this machine has); `SIGBUS` is shared memory running
out (a small `/dev/shm`); `SIGABRT` is a C++ exception or NCCL's watchdog aborting a stuck
collective.""",
    more_fix="""Follow the hint for the signal in the finding's fix line, e.g.

```sh
dmesg -T | grep -i -E 'killed process|out of memory'     # SIGKILL: lower batch size / workers
python -m gpudoctor check                                 # SIGSEGV with GPUs: compare torch's CUDA/NCCL with the driver
python -X faulthandler SCRIPT                             # SIGSEGV without GPUs: the Python line of the crash
docker run --shm-size=16g ...                             # SIGBUS
less /tmp/gpudoctor-.../rank1.stderr                      # a non-zero exit: the rank's own output says why
```""",
)


RANK_HUNG = FindingKind(
    id="rank-hung",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The watchdog (`--timeout`) fired while this rank was still running and it was the rank
furthest behind: it stopped making progress after the stage named in the title, and its
peers are waiting for it. Before stopping it, gpudoctor sent it SIGUSR1, so its Python
stack (every thread) is at the end of its stderr.""",
    evidence="""`rank`, `state: hung`, `last_stage`, `step` (how far it got), `stderr_tail` (the dumped
stack: where it is stuck), `log`.""",
    more_why="""A rank that stops making progress blocks every peer at the next collective: a deadlock in
its own code, a collective the other ranks never call (or call in another order), a data
loader that never returns, or a broken transport (PCIe P2P, `/dev/shm`, the network).""",
    more_fix="""Read where it is stuck (the stack in the evidence), then rule out the transport:

```sh
py-spy dump --pid <pid of the rank>           # on a live hang
NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 gpudoctor allreduce --nproc 2   # does it pass without P2P?
```""",
)


TIMEOUT_STILL_PROGRESSING = FindingKind(
    id="timeout-still-progressing",
    severity=Severity.WARN,
    area=AREA,
    emitted_by="[`gpudoctor run --nproc`](../commands/run.md) (`--timeout`), [`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke` (every command whose `--timeout` stops its ranks)",
    summary="""The whole-run `--timeout` fired while the ranks were still completing collectives or
steps: the job ran out of time, it did not hang. The title says how much was done and how
long before the watchdog the ranks last entered a collective or took a step.""",
    evidence="""`completed` (collectives and steps the ranks completed, summed over the ranks),
`last activity` (seconds before the watchdog fired that a rank last entered a collective or wrote a
heartbeat, on this machine's clock), `moving window` (how recent that must be to count as moving:
at least 3 s, and twice the job's longest pause between two collective calls), `timeout_s`, each
rank's `rank N` position (its last completed collective), `logs`.""",
    why="The ranks were still completing collectives or steps when the {timeout:g} s watchdog stopped them: the job ran out of time, it did not hang.",
    fix="{rerun}",
)


RANK_STILL_STARTING = FindingKind(
    id="rank-still-starting",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke`, `gpudoctor run --nproc` (every command that starts ranks)",
    summary="""The watchdog fired while this rank was still starting: its interpreter was coming up
or importing torch. For `allreduce` and `train-smoke` the watchdog counts from when every rank has
started, forgiving up to 5 minutes of start-up; `run --timeout` is wall-clock time.""",
    evidence="`rank`, `state: starting`, `last_stage` (`not started` or `started`), `startup_s`, `timeout_s`, `stderr_tail`, `log`.",
    more_why="""A rank that is importing torch is neither hung nor missing from the rendezvous: it is
slow to start. On a busy machine (other jobs on the same cores) the import alone takes tens of
seconds; from a slow network file system, minutes.""",
    more_fix="""See how long the import takes here, then give the command more time:

```sh
time python -c 'import torch'
gpudoctor allreduce --timeout 600
```""",
)


RANK_NEVER_JOINED = FindingKind(
    id="rank-never-joined",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The watchdog fired and this rank had not reached the rendezvous
(`init_process_group`): its peers were waiting for it there.""",
    evidence="`rank`, `state: nojoin`, `last_stage` (`imported`: torch was imported, the rank's own code ran), `stderr_tail`, `log`.",
    more_why="""Its peers wait in `init_process_group` until the timeout. The rank is stuck or slow
before init (heavy imports, data loading, a lock), or cannot reach
`MASTER_ADDR:MASTER_PORT` (a firewall, the wrong address on a multi-homed host).""",
    more_fix="""Check the address is reachable from the rank's host, and that nothing before
`init_process_group` blocks:

```sh
nc -zv $MASTER_ADDR $MASTER_PORT
```""",
)


RANK_PEER_LOST = FindingKind(
    id="rank-peer-lost",
    severity=Severity.INFO,
    area=AREA,
    emitted_by="`gpudoctor run --nproc N`",
    summary="""This rank failed, but only because another rank was already gone: its error is what gloo,
NCCL or the TCPStore say when the other side of a connection disappears ("Connection
closed by peer", "Connection reset by peer", "NCCL error: remote process exited or there
was a network error", "Broken pipe", "Failed to recv, got 0 bytes", a watchdog
"collective operation timeout"). It is a victim, not the cause: the report names the
root-cause rank above it, and shows each victim in one line with the collective it was in.""",
    evidence="""The title: the rank, the collective it was in (`all_reduce #3 at train.py:20`) and its
error in one line. Its full log is in the run folder (`rank<N>.stderr`).""",
    more_why="""A rank whose peer dies fails at its next collective with a connection error; reporting it
as a cause of its own would hide the rank that really failed.""",
    more_fix="""Nothing to fix in this rank: fix the root-cause rank named in the report (its exception,
its `os._exit`, or what killed it), and the victims go away with it.""",
)


RANK_RAISED = FindingKind(
    id="rank-raised",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    when="warn for a rank that only lost its peer",
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A rank raised a Python exception; the title names the exception type and where the rank
was. When the exception only says that another rank went away (*Connection closed by
peer*, *Connection reset by peer*, *Broken pipe*), the rank is a victim, not the cause: the
finding is then a warning that points at the root-cause rank.""",
    evidence="""`rank`, `state: raised`, `last_stage`, `step`, `exit_code`, `exception` (type and
message), `stderr_tail` (the traceback's end), `log`. When the rank's own output matches a known
failure pattern (the knowledge base `gpudoctor diagnose` uses), `diagnosis` holds the
pattern id ([docs/patterns/](../patterns/)) and `meaning` what it means; the title, why and
fix are then the pattern's own.""",
    more_why="""An exception ends the rank's process; the other ranks then fail or hang at their next
collective. The traceback names the failing line.""",
    more_fix="""Read the traceback of the root-cause rank (the first error in the report):

```sh
less /tmp/gpudoctor-.../rank1.stderr
```""",
)


RANK_STOPPED = FindingKind(
    id="rank-stopped",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""gpudoctor stopped this rank (SIGTERM to its process group, then SIGKILL) because another
rank had already failed and the stopped one was still running after a short grace period.""",
    evidence="`rank`, `state: stopped`, `last_stage`, `step`, `stderr_tail`, `log`.",
    more_why="""Nothing is wrong with this rank as far as gpudoctor can tell; it was waiting for, or
would have waited for, the failed one. No process is left behind.""",
    more_fix="Nothing to fix here: fix the root-cause rank (the first error in the report).",
)


RANK_WAITING = FindingKind(
    id="rank-waiting",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""When the watchdog fired this rank was blocked in a collective (the stage in the title)
waiting for the rank named there, which was behind it. It is a victim of that rank's
problem, not a problem itself.""",
    evidence="""`rank`, `state: hung`, `last_stage`, `step`, the end of its stack (`stderr_tail`: the
collective it was waiting in), `log`.""",
    more_why="""A healthy rank blocks in a collective that a stuck peer never entered; it tells you
where the job was, not why.""",
    more_fix="""Look at the rank named in the title first (its `rank-hung` or `rank-never-joined`
finding):

```sh
less /tmp/gpudoctor-.../rank1.stderr
```""",
)


RENDEZVOUS_HANG = FindingKind(
    id="rendezvous-hang",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""Every rank reached `init_process_group` and none got past it before the watchdog fired:
the rendezvous itself is broken, not one rank.""",
    evidence="""From the watchdog alone: `rank`, `state: hung`, `last_stage: rendezvous`, `stderr_tail`, `log`
(one finding per rank). From the ranks' traces (`run --nproc`: one finding, no rank blamed): `ranks`
(where each waits), `no progress for`, `meeting point` (the `host:port` each rank went to, from
its `init_method` or `MASTER_ADDR:MASTER_PORT` as the script left them), `listening there now`, and
`launcher's MASTER_PORT` when the script replaced it (its title then says so: under `gpudoctor
run --nproc` and torchrun the store is the launcher's, so `os.environ["MASTER_PORT"] = ...` leaves
nobody hosting one; `os.environ.setdefault` keeps it). A port held by another process is
[rendezvous-port-held](rendezvous-port-held.md).""",
    title={
        "traces": "no rank got past init_process_group in {seconds:.0f} s: {positions}",
    },
    why={
        "traces": "Every rank reached init_process_group and none got past it: the ranks never met. The address they "
        "meet at (MASTER_ADDR:MASTER_PORT, or init_method) is not reachable, is held by a process that is not "
        "this job's store, or a rank that should host the store never did; no collective ran, so no transport is involved.",
    },
    fix={
        "traces": "check the meeting point is this job's and reachable: nc -zv $MASTER_ADDR $MASTER_PORT; "
        "ss -ltnp \"sport = :$MASTER_PORT\" (who listens there); set MASTER_PORT to a free port",
    },
    more_why="""The ranks cannot meet: `MASTER_ADDR` is not reachable from every node, a firewall blocks
the port, the port is taken, or `NCCL_SOCKET_IFNAME` / `GLOO_SOCKET_IFNAME` names an
interface that does not exist.""",
    more_fix="""```sh
export MASTER_ADDR=<an address every node can reach> MASTER_PORT=<a free port>
ip -br addr        # the interface names to give NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME
```""",
)


RENDEZVOUS_PORT_HELD = FindingKind(
    id="rendezvous-port-held",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor run --nproc`](../commands/run.md)",
    summary="""Every rank waited in `init_process_group` and none got past it, and the port they went to
meet at (`MASTER_PORT`, or `init_method`'s) is held by a process that is not one of the job's
ranks: the title names the port and the process (pid and command line) when this user can see it.""",
    evidence="""`ranks` (where each waits), `no progress for`, `meeting point` (`host:port`, as each rank
left it in the run folder), `held by` (`pid N (command line)`, or a process of another user that
`sudo ss -ltnp` names).""",
    more_why="""A process that is not the job's store listens on the port and never answers, so every rank's
rendezvous waits until its timeout. Nothing on the network is stuck and no collective ran: NCCL or
gloo settings do not matter here.""",
    more_fix="""Use a free port, or stop what holds it:

```sh
ss -ltnp 'sport = :29500'                       # who holds it
unset MASTER_PORT                                # under gpudoctor run --nproc / torchrun: the launcher picks one
```""",
)


SMOKE_NO_RESULT = FindingKind(
    id="smoke-no-result",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor train-smoke`](../commands/train-smoke.md)",
    summary="""Every rank of the reference job exited with code 0, yet at least one left no result for
the verifications.""",
    evidence="`logs` (the run directory with each rank's stderr and stdout).",
    title="a rank of the reference job exited without returning its results",
    why="Every rank exited 0, yet one left no result file: something in the rank called sys.exit(0) early.",
    # {stderr}: the ranks' stderr files, a glob
    fix="ls {logs}; less {stderr}",
    more_why="""It may be a `sys.exit(0)` in an import hook or a site customisation; nothing can be
verified without the rank's result.""",
)
