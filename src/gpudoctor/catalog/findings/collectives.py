"""Findings in the area "collectives"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "collectives"
EMITTED_BY = "`gpudoctor run`, `gpudoctor diagnose DIR`"


COLLECTIVE_MISMATCH = FindingKind(
    id="collective-mismatch",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="`gpudoctor run` (live, `--nproc` and under torchrun), `gpudoctor diagnose DIR`",
    summary="""Two ranks made their collective number *k* (in the same process group) with a different
kind (`all_reduce` on one rank, `broadcast` on another), a different tensor shape, or a
different dtype. gpudoctor lines up every rank's collectives by number while the job
runs (from PyTorch's Flight Recorder and its own hooks on `torch.distributed`), reports
the first collective that differs within seconds, and stops the job: without it, gloo
aborts with "Received data size doesn't match expected size" or both ranks wait until
the backend's timeout (30 minutes on gloo, 10 on NCCL). The fingerprint also holds a
rooted collective's `src`/`dst` (each rank rooting its own `broadcast`), the ranks of each
`new_group` by creation order (a group made on some ranks only shifts every later group's
numbering), and for a `send` the `recv` that meets it (a buffer too small for what is sent).
The exit status is 1 whether gpudoctor stopped the job or gloo aborted a rank first.""",
    evidence="""`collective` (the number *k*), `process group`, `differs in` (kind, shape, dtype, root, group, size or send/recv), and
one line per rank: its call with shapes, dtype and the user's own `file:line`. A `note`
says when one rank ran the same line more often than another (uneven batches).""",
    more_why="""Every rank must call the same collectives in the same order with the same shapes. A
collective inside `if rank == 0:` or a tensor whose size depends on the rank's data makes
the ranks exchange the wrong bytes or wait for each other forever.""",
    more_fix="""Make the two lines named in the evidence the same call on every rank: take the
collective out of the rank-dependent branch, or pad the tensor to one shape
(`all_gather_object` for ragged data), or cast it to one dtype (`t.to(torch.float32)`).""",
)


COLLECTIVE_MISSING = FindingKind(
    id="collective-missing",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""A rank waits in a collective (say `barrier` #6 at `train.py:20`) that another rank never
called: that rank finished or exited after fewer collectives. The usual cause is a
collective under `if rank == 0:` — a barrier after saving a checkpoint, an
`all_gather_object` for metrics, an evaluation forward of a DDP model on rank 0 only.
Also reported this way, with that rank as the root cause: a rank that called
`destroy_process_group()` and left while a peer still calls collectives (its line; the fix:
destroy only after every rank is done), and a rank that finished without ever calling
`init_process_group` while its peers wait for it in the rendezvous.""",
    evidence="""The waiting rank's call (kind, shape, `file:line`, number), the rank that never called it
and how many collectives it made.""",
    more_why="""A collective completes only when every rank of the group calls it; the others wait until
the backend's timeout (30 minutes on gloo, 10 on NCCL).""",
    more_fix="""Call it on every rank, or on none:

```python
if rank == 0:
    torch.save(model.module.state_dict(), "ckpt.pt")
dist.barrier()          # outside the `if`: every rank reaches it
```""",
)


COLLECTIVE_STALL = FindingKind(
    id="collective-stall",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="`gpudoctor run` (`--hang-timeout`), and the ranks of `allreduce` / `train-smoke`",
    summary="""No rank made collective progress for `--hang-timeout` seconds while at least one rank was
waiting in a collective. gpudoctor then took every rank's Python stack (all threads) and
its last collectives, and says where each rank stands: "rank 0 waits in all_reduce #2 at
train.py:17; rank 1 is not in a collective: train.py:8 in load_next_shard (time.sleep)".
The rank that is not in the collective holds the others up and is named as the root cause.
A rank waiting in `init_process_group` for a rank that never arrives (stuck loading its
data before the rendezvous) is reported the same way.

A job that is slow but moving is never flagged: any completed collective resets the clock.
For `allreduce` and `train-smoke` the stall is explained when their `--timeout` watchdog
fires.""",
    evidence="""One line per rank (where it stands), `no progress for`, `root cause`. Each rank's full
stack dump is in the run folder (`rank<N>.stacks.txt`) with its trace
(`rank<N>.collectives.json`).""",
    more_why="""A collective cannot complete until every rank of the group calls it: one rank stuck in its
data loader, a deadlock in its own code, or a skipped call holds every other rank up.""",
    more_fix="""Look at the root-cause rank's line. If that work is legitimately long (evaluation, a big
checkpoint), raise the limit of the command that reported it (the finding's fix names it):
`gpudoctor run --hang-timeout 1800 ...`, or `--timeout` for `allreduce` and `train-smoke`
(and for `run`'s own `--timeout` watchdog). If it skips the collective, call it on every rank.""",
)


COLLECTIVE_DEADLOCK = FindingKind(
    id="collective-deadlock",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="`gpudoctor run --nproc` (live, and from the traces at `--hang-timeout` / `--timeout`)",
    summary="""Ranks blocked on each other in a cycle: "rank 0 waits in send #1 to rank 1 at x.py:7;
rank 1 waits in send #1 to rank 0 at x.py:7". Each waits in a call (a blocking send or
recv, the wait() of an isend/irecv, or a collective) that can only finish when the next rank
of the cycle makes the matching call, and that rank is itself blocked. gpudoctor sees it
from the ranks' traces (send/recv are recorded with their peer and their number in that
direction) and stops the job once the same cycle has held for a few seconds, without
waiting for `--hang-timeout`.""",
    evidence="""One line per rank of the cycle (its call, peer and line), `cycle`, `root cause` (the
lowest rank of the cycle).""",
    more_why="""A blocking send waits for the peer's matching recv (large messages on gloo, always on NCCL),
a recv for the peer's send, a collective for every rank of its group: two ranks that both
send first, both receive first, or one in a collective while the other waits for its
send, never move.""",
    more_fix="""Order the calls so that they pair up: even ranks send then receive, odd ranks receive then
send; or post both at once with `dist.batch_isend_irecv([...])` (or `isend` + `irecv`,
then wait on both); make every rank reach the collectives in the same order.""",
)


UNEVEN_COLLECTIVES = FindingKind(
    id="uneven-collectives",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""One rank finished its loop (or exited) while another rank waits in — or died in — a
collective that the finished rank never called, and the waiting rank had called that same
line more often: "rank 0 finished after 5 all_reduce calls at train.py:10; rank 1 called a
6th". The ranks' sequences of calls part where the finished rank left the loop: it is the
root cause (`root cause` in the evidence), the waiting rank its victim. Either its data was
shorter (uneven batches), or it decided by itself to stop or to skip a step (early stopping,
a NaN check that skips a backward on one rank).""",
    evidence="""The finished rank and how many collectives it made, the waiting rank's call (kind, shape,
`file:line`, collective number), the process group.""",
    more_why="""With DDP every backward all-reduces the gradients: a rank with one batch more waits in that
all-reduce for a peer that has already left, until the backend timeout, or fails with
"Connection closed by peer".""",
    more_fix="""A per-rank decision to stop or to skip a step must be made collective:

```python
stop = torch.tensor([float(should_stop)])
dist.all_reduce(stop, op=dist.ReduceOp.MAX)   # every rank stops at the same step
if stop.item():
    break
```

Uneven data: give every rank the same number of batches:

```python
sampler = DistributedSampler(dataset, drop_last=True)
loader = DataLoader(dataset, batch_size=32, sampler=sampler, drop_last=True)
```

or let ranks finish unevenly on purpose:

```python
from torch.distributed.algorithms.join import Join
with Join([model]):
    for batch in loader:
        ...
```""",
)
