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
    title="rank {rank} of the {launcher} job {what}{progress}",
    why={
        "peer": "Under torchrun or SLURM each rank is its own process and rank 0 only sees its own side: a peer that "
        "crashed, hung or never joined shows here as a timeout or a closed connection.",
        # the error names its own cause (two ranks on one GPU): the peers are not the story
        "own": "Rank {rank}'s own error decides it, whatever the other ranks did ({diagnosis}: {meaning}). {own_why}",
    },
    fix={
        "own": "{own_fix}",
        "allreduce": "read the launcher's output for the first rank that failed (torchrun prints its exit code and traceback), or run `gpudoctor allreduce --nproc N` on one node to have every rank supervised",
        "check": "read the launcher's output for the first rank that failed, or run `gpudoctor check` on each node",
        "train-smoke": "gpudoctor train-smoke --nproc {nproc}   # the same job under gpudoctor's launcher names the failing rank",
    },
    more_why="""The benchmark did not complete; the cause is usually on another rank or node. Where the
exception is itself a known cause (a failure pattern whose role is *cause*, such as
[`nccl-duplicate-gpu`](../patterns/nccl-duplicate-gpu.md)), the why and the fix are that
pattern's: the rank's own error decides it.""",
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
rank (their whole process groups, so their own children too) before printing this. A signal that arrives while the ranks
are still being started is held until every rank started so far is known, so none is missed. A signal gpudoctor was
started ignoring stays ignored: under `nohup`, a dropped session does not stop the job.""",
    evidence="`ranks` (how many were stopped), `logs` (the run folder with each rank's stderr).",
    title="interrupted after {elapsed:.1f} s: all {ranks} ranks were stopped",
    why="Ctrl-C or SIGTERM reached gpudoctor; it stopped every rank and left no process behind.",
    fix="rerun the same command when ready",
    more_why="The measurement is incomplete; nothing is left running.",
    more_fix="Rerun the same command when ready.",
)


# The rank that failed first, as the job's verdict names it (hang/verdict.py), and why it is the cause.
_FIRST_TITLE = "rank {rank} failed first: it {how} ({collective})"
_ROOT_WHY = (
    "The first rank to fail with its own error is the root cause: its peers then lose "
    "their connection to it and fail or wait in the next collective."
)
# Another rank that failed with its own error after the first one: a line, no why or fix of its own.
_ALSO_TITLE = "rank {rank} also failed: it {how} ({collective})"


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
    # "signal" and "first-signal": {meaning} and {action} are the signal's own, from hang/meaning.py's
    # table (judged by the GPUs this machine has: a segfault without GPUs is not CUDA's).
    title={
        "signal": "rank {rank} crashed: killed by {signal} after '{stage}'{note}",
        "exited": "rank {rank} exited with code {code} after '{stage}'{note}",
        "first-killed": _FIRST_TITLE,
        "first-signal": _FIRST_TITLE,
        "first-after-end": _FIRST_TITLE,
        "first-exit": _FIRST_TITLE,
        "also": _ALSO_TITLE,
    },
    why={
        "signal": "{meaning}",
        "exited": "The rank's process ended with a non-zero exit code; its peers cannot finish without it.",
        "first-killed": _ROOT_WHY,
        "first-signal": _ROOT_WHY + " {meaning}",
        "first-after-end": "{meaning}",
        "first-exit": _ROOT_WHY,
    },
    fix={
        "signal": "{action}",
        "exited": "less {log}   # the rank's own output says why it exited",
        "first-killed": "killed from outside, most often by the kernel's OOM killer: dmesg -T | grep -i -E 'killed process|out of memory'",
        "first-signal": "a native crash: read the Python stack in {fatal} in the run folder, then `python -m gpudoctor check`; {action}",
        "first-after-end": "{action}",
        "first-exit": "the rank chose to exit with {code} at {at_line}: read its log ({log})",
        "first-exit-unplaced": "the rank chose to exit with {code}: read what it printed before, in its log ({log})",
    },
    more_why="""Its peers cannot finish a collective without it: they fail with *Connection closed by
peer* or wait until the watchdog. The signal points at the cause: `SIGKILL` from outside is
most often the kernel's OOM killer; `SIGSEGV` is a native crash in a C++ library: on a
machine with GPUs most often CUDA/NCCL (mismatched NCCL/CUDA/driver versions, a broken
build), on a machine without one a compiled extension built for another torch/numpy/Python
or a CPU kernel (the finding says which, from the GPUs this machine has); `SIGBUS` is shared memory running
out (a small `/dev/shm`); `SIGABRT` is a C++ exception or NCCL's watchdog aborting a stuck
collective. A `SIGABRT` *after its script had ended*, with the process group never destroyed,
is the group's own threads aborting the process at interpreter teardown ("terminate called
without an active exception"): the work was done, and `dist.destroy_process_group()` as the
script's last line ends it cleanly.""",
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
    title="rank {rank} was stuck after '{stage}' (step {step}) when the {timeout:g} s watchdog fired{note}",
    why="A rank that stops making progress blocks every peer at the next collective: "
    "a deadlock in its own code, a collective the other ranks never call, or a broken transport.",
    fix="read the stack in stderr_tail (dumped just before the rank was stopped) for the line it is stuck on; "
    "if it is only slow, raise --timeout; on GPUs rerun with NCCL_DEBUG=INFO NCCL_P2P_DISABLE=1 to rule out P2P",
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
    when="exit 124, \"ok\": false: not finished, never healthy",
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
    title="ran out of time after {done}, still progressing: the {timeout:g} s --timeout fired "
    "{quiet:.1f} s after the ranks' last collective call or step",
    why="The ranks were still completing collectives or steps when the {timeout:g} s watchdog stopped them: the job ran out of time, it did not hang.",
    # {more}: four times the --timeout, rounded up to a minute
    fix="give it more time: rerun with --timeout {more}",
)


RANK_STILL_STARTING = FindingKind(
    id="rank-still-starting",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md), `gpudoctor train-smoke`, `gpudoctor run --nproc` (every command that starts ranks)",
    summary="""The watchdog fired while this rank was still starting: its interpreter was coming up
or importing torch. For `allreduce` and `train-smoke` the watchdog counts from when every rank has
started, forgiving up to 5 minutes of start-up; `run --timeout` is wall-clock time.""",
    evidence="`rank`, `state: starting`, `last_stage` (`not started`, `started`, or `script`: under `run`, the script runs but has not imported torch), `startup_s`, `timeout_s`, `stderr_tail`, `log`.",
    # "forgiven": the watchdog counts from when every rank has started (allreduce, train-smoke);
    # "wall-clock": `run --timeout`, counted from the start, the import included.
    title={
        "forgiven": "rank {rank} was still starting (Python, import torch) when the watchdog fired "
        "({startup:.0f} s of start-up, then {timeout:g} s){note}",
        "wall-clock": "rank {rank} was still starting (Python, import torch) when the watchdog fired after {timeout:g} s{note}",
        "script": "rank {rank} had not imported torch when the watchdog fired after {timeout:g} s: its script was still running "
        "the code before `import torch` (or a slow import there){note}",
    },
    why={
        "forgiven": "The rank had not got past its start-up: the interpreter and `import torch` (tens of seconds on a busy "
        "machine, minutes from a slow network file system). Start-up does not count against the watchdog up to "
        "5 minutes; past that, something on this machine is making the import crawl (CPU, disk, a lock).",
        "wall-clock": "The rank had not got past its start-up: the interpreter and `import torch` (seconds, tens of seconds on a "
        "busy machine). This --timeout counts wall-clock time from the start, start-up included: it was shorter than "
        "the import takes here.",
        "script": "The rank's script had started but had not yet imported torch: its own code before the import (reading "
        "data, a download, a sleep) or an import it makes there was still running; its stack (stderr_tail) shows which. "
        "This --timeout counts wall-clock time from the start, that code included.",
    },
    fix={
        "forgiven": "time python -c 'import torch'   # how long the import takes here; then give the command a longer --timeout",
        "wall-clock": "time python -c 'import torch'   # how long the import takes here; then give the command a longer --timeout",
        "script": "read the rank's stack (stderr_tail, or its log): the line it was on before import torch; if that work is meant to take long, give the command a longer --timeout",
    },
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
    title="rank {rank} never joined the rendezvous within {timeout:g} s{note}",
    why="The rank never reached the rendezvous, so its peers wait in init_process_group until the timeout: "
    "it is stuck or slow before init (imports, data loading), or cannot reach MASTER_ADDR:MASTER_PORT.",
    fix="check MASTER_ADDR/MASTER_PORT are reachable from every node (nc -zv $MASTER_ADDR $MASTER_PORT), "
    "and that nothing before init_process_group blocks",
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
    title={
        "named": "rank {rank} failed because rank {gone} was gone ({collective}): {error}",
        "unnamed": "rank {rank} failed because a peer was gone ({collective}): {error}",
    },
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
    title={
        "raised": "rank {rank} raised {raised} at '{stage}'{note}",
        "victim": "rank {rank} lost its peer mid-collective ({raised})",
        "first": _FIRST_TITLE,
        "also": _ALSO_TITLE,
    },
    why={
        "raised": "An exception in one rank ends its process; the others then fail or hang at the next collective.",
        "victim": "This rank failed only because another rank went away: look at the root-cause rank.",
        "first": _ROOT_WHY,
    },
    fix={
        "raised": "less {log}   # the traceback names the failing line",
        "victim": "less {log}   # the traceback names the failing line",
        "first": "fix the error at {at_line}; the traceback is in {log}",
        "first-unplaced": "fix the error at the rank's log ({log}); the traceback is in {log}",
    },
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
    title={
        "after-peer": "rank {rank} was stopped by gpudoctor after another rank failed",
        "after-rank": "rank {rank} was stopped by gpudoctor after rank {first} failed ({collective})",
    },
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
    title="rank {rank} was waiting for rank {cause} at '{stage}' when the watchdog fired",
    why="A healthy rank blocked in a collective that a stuck peer never entered.",
    fix="look at rank {cause} first",
    more_why="""A healthy rank blocks in a collective that a stuck peer never entered; it tells you
where the job was, not why.""",
    more_fix="""Look at the rank named in the title first (its `rank-hung` or `rank-never-joined`
finding):

```sh
less /tmp/gpudoctor-.../rank1.stderr
```""",
)


# From the ranks' traces: every rank waited in init_process_group, and the meeting point says why.
_NEVER_MET = (
    "Every rank reached init_process_group and none got past it: the ranks never met. The address they "
    "meet at (MASTER_ADDR:MASTER_PORT, or init_method) is not reachable, is held by a process that is not "
    "this job's store, or a rank that should host the store never did; no collective ran, so no transport is involved."
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
        "watchdog": "rank {rank} waited in the rendezvous for {timeout:g} s",
        "launcher-port": "the script set MASTER_PORT={port} itself, replacing the launcher's ({launcher}): "
        "nobody hosts a store there, so no rank got past init_process_group",
    },
    why={
        "traces": _NEVER_MET,
        "watchdog": "Every rank reached init_process_group and none got past it: the rendezvous itself is broken "
        "(MASTER_ADDR unreachable, a firewall, a port in use, NCCL_SOCKET_IFNAME naming a missing interface).",
        "launcher-port": _NEVER_MET,
    },
    fix={
        "traces": "check the meeting point is this job's and reachable: nc -zv $MASTER_ADDR $MASTER_PORT; "
        "ss -ltnp \"sport = :$MASTER_PORT\" (who listens there); set MASTER_PORT to a free port",
        "watchdog": "export MASTER_ADDR=<reachable ip> MASTER_PORT=<free port>; check NCCL_SOCKET_IFNAME with `ip -br addr`",
        "launcher-port": "keep the launcher's port: os.environ.setdefault(\"MASTER_PORT\", \"29500\") instead of "
        "os.environ[\"MASTER_PORT\"] = ... (torchrun and gpudoctor run --nproc set it)",
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
    title="port {port} (the ranks' MASTER_PORT, {host}:{port}) is held by {who}, which is not this job: "
    "every rank waited in init_process_group for it to answer",
    why="The ranks meet at MASTER_ADDR:MASTER_PORT. A process that is not the job's store listens on that "
    "port and never answers, so init_process_group waits until its timeout; the network is not involved.",
    fix="use a free port (unset MASTER_PORT under gpudoctor run --nproc: it picks one; or "
    "MASTER_PORT=$(python -c 'import socket; s=socket.socket(); s.bind((\"\", 0)); print(s.getsockname()[1])')), "
    "or stop what holds {port}: ss -ltnp 'sport = :{port}'",
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
