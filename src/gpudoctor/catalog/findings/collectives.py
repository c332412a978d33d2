"""Findings in the area "collectives"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "collectives"
EMITTED_BY = "`gpudoctor run`, `gpudoctor diagnose DIR`"

# Sentences that several cases of these kinds say.
_MISMATCH_WHY = (
    "Every rank must call the same collectives in the same order with the same shapes and dtypes. "
    "Here the calls with the same number differ, so the ranks exchange the wrong data or wait for each "
    "other forever (gloo may abort with 'Received data size doesn't match expected size', NCCL hangs "
    "until its timeout)."
)
_MISSING_WHY = (
    "A collective called on some ranks only (inside `if rank == 0:` for instance) is waited for "
    "forever by the ranks that call it: every rank must make the same calls."
)
_APART_WHY = (
    "Each of these ranks waits in a collective that the others are not in: a collective completes only "
    "when every rank of its group makes the same call, so none of them ever will; the network is not at fault."
)
# A collective made by DDP's forward (its buffer broadcast) on one rank: a mismatch or a missing call.
_DDP_FORWARD_FIX = (
    "rank {rank} ran the DDP-wrapped model's forward by itself at {where} (an evaluation on one rank?): DDP's "
    "forward makes collectives of its own (it broadcasts buffers) that every rank must join: evaluate with "
    "model.module (the unwrapped model) there, or run the evaluation on every rank"
)


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
    title={
        "group": "new_group #{n} differs across ranks: {made}",
        "p2p": "rank {rank}'s {name} does not fit the recv that meets it: rank {rank} sends {sent}; rank {receiver} receives into {received}",
        "kind": "collective #{seq} differs across ranks: {calls}{handled}",
        "order": "collective #{seq} differs across ranks: {calls} — same calls, another order: {orders}{handled}",
        "skip": "collective #{seq} differs across ranks: {calls} — rank {only}'s {kind} at {site} is a call {others} never made: "
        "made on rank {only} only, the others skipped it (or call something else there){handled}",
        "root": "collective #{seq} ({kind}) has a different root on each rank: {roots}{handled}",
        "shape": "collective #{seq} ({kind}) has a different shape on each rank: {values}{handled}",
        "dtype": "collective #{seq} ({kind}) has a different dtype on each rank: {values}{handled}",
        "unmatched": "rank {rank}'s {name}{at} has no matching {other} on rank {peer} (it made {matched}): the ranks' collectives no longer line up",
    },
    why={
        "group": "dist.new_group must be called by every rank, in the same order, with the same ranks, even by ranks "
        "that are not members: groups are numbered by creation order, so one made on some ranks only (or with "
        "other ranks) shifts every later group's numbering, and their collectives no longer meet.",
        "p2p": _MISMATCH_WHY,
        "kind": _MISMATCH_WHY,
        "order": _MISMATCH_WHY,
        "skip": _MISMATCH_WHY,
        "root": _MISMATCH_WHY,
        "shape": _MISMATCH_WHY,
        "dtype": _MISMATCH_WHY,
        "unmatched": "A send that its peer never receives (or a recv never sent to) is left pending; gloo gives every "
        "send/recv a number in the group's sequence, as it does a collective, so from then on the ranks disagree "
        "on which collective is which and all wait in the next one.",
    },
    fix={
        "group": "call every dist.new_group(...) on every rank, in the same order, with the same ranks ({sites})",
        "p2p": "give the recv a buffer of the sent tensor's shape and dtype at {sites} (send the shape first if it varies)",
        "kind": "call the same collective on every rank at this point: look at {sites} for a call made under `if rank == ...` only",
        "kind-unplaced": "call the same collective on every rank at this point: look for a collective called under `if rank == ...` only",
        "order": "make every rank call {kinds} in the same order ({lines}): the order must not depend on the rank or its data",
        "skip": "call the {kind} at {site} on every rank or on none: take it out of any `if rank == ...` block "
        "(or make the condition the same on every rank)",
        "ddp-forward": _DDP_FORWARD_FIX,
        "root": "pass the same {root} on every rank at {sites} (a constant such as {root}=0, not the rank's own rank)",
        "shape": "give the tensor the same shape on every rank at {sites} (pad it, or use all_gather_object for ragged data)",
        "dtype": "give the tensor the same dtype on every rank at {sites} (cast it with .to(dtype))",
        "unmatched": "pair every send with a recv on its peer (and every isend/irecv with a wait): look at {site}",
    },
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
    title={
        "destroyed": "rank {rank} called destroy_process_group(){at} after {collectives} and left; rank {waiter} {state} {name}{waiter_at}",
        "never-called": "rank {rank} {state} {kind} #{seq}{at}, which rank {other} never called (it finished after {done} collectives)",
        "never-joined": "rank {rank} finished without calling init_process_group; {waiters} {wait} for it in the rendezvous",
    },
    why={
        "destroyed": "destroy_process_group() tears down this rank's side of every group: a peer still calling collectives "
        "then waits for it forever or fails with a closed connection.",
        "never-called": _MISSING_WHY,
        "never-joined": _MISSING_WHY,
    },
    fix={
        "destroyed": "call dist.destroy_process_group() only after every rank is done: once, at the end of main, on every "
        "rank (after their last collective); an error path on one rank should raise, not destroy the group and exit 0",
        "never-called": "call it on every rank: take the {kind} at {where} out of any `if rank == ...` block",
        "never-called-unplaced": "call {kind} on every rank, or on none",
        "ddp-forward": _DDP_FORWARD_FIX,
        "never-joined": "every rank must call init_process_group: rank {rank} returned (or called sys.exit(0)) before it; "
        "let it join and take part in the collectives, or start fewer ranks",
    },
    more_why="""A collective completes only when every rank of the group calls it; the others wait until
the backend's timeout (30 minutes on gloo, 10 on NCCL).""",
    more_fix="""Call it on every rank, or on none:

```python
if rank == 0:
    torch.save(model.module.state_dict(), "ckpt.pt")
dist.barrier()          # outside the `if`: every rank reaches it
```""",
)


_MONITORED_WHY = "monitored_barrier names the ranks that did not arrive within its timeout."


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
    title={
        "held-up": "rank {rank} holds the others up: {positions} — no collective progress for {seconds:.0f} s when {limit} stopped the job",
        "transport": "every rank waits in collective #{seq} for {seconds:.0f} s: {positions}",
        # hang/verdict.py: a rank's monitored_barrier raised, naming the rank that never came
        "monitored": "rank {rank} never reached the monitored_barrier{at} that rank {waiter} waited in "
        "(it raised: {raised}); rank {rank} was at {there}",
        "monitored-unseen": "rank {rank} never reached the monitored_barrier{at} that rank {waiter} waited in (it raised: {raised})",
        "process-groups": "the ranks wait in collectives of different process groups: {waits}",
        "call": "the ranks wait in different collectives: {waits}",
        "collective-number": "the ranks wait in different collectives: {waits} — they count their calls differently: "
        "one made a call more, or skipped one, before these",
    },
    why={
        "held-up": "The ranks that wait in a collective cannot go on until every rank of the group calls it; "
        "the rank that is not in it holds them all up.",
        "monitored": _MONITORED_WHY,
        "monitored-unseen": _MONITORED_WHY,
        "transport": "All ranks are inside the same collective, with the same kind, shapes and dtypes, and none completes: "
        "the transport between them is stuck.",
        "process-groups": _APART_WHY,
        "call": _APART_WHY,
        "collective-number": _APART_WHY,
    },
    fix={
        "held-up": "look at rank {rank}: it is at {stack}, not in {what}; if that work is legitimately long, raise {limit}; "
        "if it skips the collective, call it on every rank",
        "held-up-unseen": "look at rank {rank}: its stacks are in the run folder, not in {what}; if that work is legitimately "
        "long, raise {limit}; if it skips the collective, call it on every rank",
        "monitored": "look at rank {rank}: what it does instead of reaching the barrier (its log: {log})",
        "transport": "rerun with NCCL_DEBUG=INFO (GPUs) or GLOO_DEBUG; on GPUs try NCCL_P2P_DISABLE=1 and check the network",
        "process-groups": "every member of a group must make its collectives, in the same order relative to the other groups' "
        "({lines}): a rank that is not in a group must not call them, and every rank must create every group",
        "call": "make every rank make the same calls in the same order ({lines}): look for a collective under `if rank == ...` "
        "or a data-dependent condition before these lines",
    },
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
    title="deadlock: {waits} — each waits for the next",
    why="Each of these ranks is blocked in a call that can only finish when another of them makes a "
    "matching call, and that one is itself blocked waiting: none can move, whatever the timeout "
    "(a blocking send/recv waits for its peer's matching recv/send; a collective for every rank of its group).",
    fix={
        "send": "order the calls at {lines}: even ranks send first then receive, odd ranks receive first then send, "
        "or post both at once with dist.batch_isend_irecv([...]) (or isend + irecv, then wait on both)",
        "recv": "someone must send first: at {lines} every rank receives before it sends; make one side send first",
        "new-group": "call dist.new_group(...) on every rank, in the same order, even on ranks that are not in the group "
        "({lines}): a group made on some ranks only blocks them, and shifts every later group's numbering",
        "p2p": "a rank waits for a peer's send/recv while that peer waits in another call ({lines}): make the "
        "send/recv and the collectives happen in the same order on every rank",
        "collective": "every rank must call the group's collectives in the same order ({lines})",
    },
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
    title="uneven work: rank {rank} left the loop after {calls} at {where}{since} and finished; "
    "rank {waiter} called {nth} (collective #{seq}) and waits for it",
    why="One rank ran its loop fewer times than another (uneven data: the last batch exists on some ranks "
    "only), so the rank with more work waits in a collective that its finished peer will never call.",
    # The rank that left first is where the ranks' sequences part: what it did decides the fix.
    fix="if rank {rank} decided by itself to stop or to skip a step (early stopping, a max-steps or NaN/inf check "
    "on its own loss), make the decision collective: all_reduce the flag (or broadcast it from rank 0) so that "
    "every rank breaks, or skips the backward, at the same step; if its data is shorter, "
    "give every rank the same number of batches: DistributedSampler(..., drop_last=True) / "
    "DataLoader(..., drop_last=True), or wrap the loop in "
    "`with torch.distributed.algorithms.Join([model]):`",
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
