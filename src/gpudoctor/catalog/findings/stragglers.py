"""Findings of the straggler doctor (`gpudoctor run`: where the step time goes)."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "performance"
EMITTED_BY = "[`gpudoctor run`](../commands/run.md)"

# How late the straggler is and what it costs, whoever holds the job back (a rank, a node).
_STRAGGLER_COST = (
    "arrives {late_ms:.0f} ms late per step, the last at {last_share:.0%} of the steps' collectives; it spends "
    "{excess_ms:.0f} ms more per step {phase_words} than the median rank; the others spent {share:.0%} of the "
    "measured time waiting for it: the job would run up to {faster:.2g}x faster if it kept up"
)


RANK_STRAGGLER = FindingKind(
    id="rank-straggler",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""One rank (or every rank of one node) arrives late at the steps' collectives, so every
other rank waits for it: the title names the rank and its node, how late it arrives and at
what share of the steps, the phase of the step in which it spends more time than the median
of the other ranks (loading data, forward, backward, optimizer step, or its own Python between
them), and how much faster the job would run if it kept up.""",
    evidence="""`rank`, `node`, `late node` (when all the ranks of one node are late and no other),
`phase`, `late ms per step` (its mean arrival after the first rank), `last to arrive at`
(share of the steps), `excess ms per step` (in that phase, over the other ranks' median),
`step ms`, `speedup if it kept up` (bounded by the measured time: 1 / (1 − the share of the compared
steps' wall time the others spent waiting for it)), `others' waiting share of the measured time`,
`steps it was late at` (above the noise floor), `its phases ms`,
`other ranks' median phases ms`, `steps compared`, `step ends at` (optimizer, backward or
collective).""",
    title={
        "rank": "rank {rank} holds the job back: it " + _STRAGGLER_COST,
        "rank-of-nodes": "rank {rank} (node {node}) holds the job back: it " + _STRAGGLER_COST,
        "node": "node {node} (ranks {ranks}) holds the job back: rank {rank} " + _STRAGGLER_COST,
    },
    why="Every collective (DDP's gradient all-reduce included) waits for the last rank to arrive: "
    "the other ranks spend the {late_ms:.0f} ms rank {rank} is late waiting, every step.",
    # By the phase it loses the time in; {where}: its node.
    fix={
        "data": "feed rank {rank} faster: more DataLoader workers, pinned memory, prefetching "
        "(DataLoader(dataset, num_workers=8, pin_memory=True, persistent_workers=True, prefetch_factor=4)), "
        "and check the storage {where} reads from",
        "model-pass": "look for an uneven batch or a rank-dependent branch (`if rank == {rank}:`) in the model's "
        "{phase} pass; if the work is even, the device is slower or throttled: gpudoctor check on {where}",
        "optimizer": "rank {rank} spends longer in optimizer.step(): uneven parameter shards (ZeRO/FSDP) or "
        "a slower device; gpudoctor check on {where}",
        "other": "rank {rank} does work between the phases the others do not (logging, checkpointing, "
        "evaluation under `if rank == ...`): move it out of the step or spread it over the ranks",
    },
    more_why="""Every collective waits for its last rank, DDP's gradient all-reduce included: a rank that is
late by *d* ms per step makes every other rank wait *d* ms per step, so the whole job runs at
the speed of its slowest rank. Clocks of different nodes are never compared: each rank
measures its own wait inside the collectives, and the rank that waits least is the one the
others wait for.""",
    checked="""Each rank accounts for every step on its own clock (hooks/step_clock.py): the DataLoader
iterator, DDP's forward, backward up to the autograd engine's final callback, the wait for
DDP's gradient all-reduce after it, the optimizer step, and every torch.distributed
collective call. The ranks' records are lined up by step number. Noise floor: a rank is a
straggler only when its mean lateness is at least 5 ms and 15 % of the step, and it is the
last to arrive at 70 % of the steps or more, or late by 3 times the next latest rank or more
(a rank late now and then, a checkpoint every N steps), at more than one of the compared steps
(once is [rank-pause](rank-pause.md)); balanced jobs stay well below (see
docs/commands/run.md, "Where the step time goes").""",
    more_fix="""Fit the fix to the phase:

- **data**: feed that rank faster —
  `DataLoader(dataset, num_workers=8, pin_memory=True, persistent_workers=True, prefetch_factor=4)`,
  and check the storage its node reads from;
- **forward / backward**: look for an uneven batch or a rank-dependent branch
  (`if rank == k:`); if the work is even, the device is slower or throttled: `gpudoctor check`
  on that node;
- **optimizer**: uneven parameter shards, or a slower device (`gpudoctor check`);
- **other**: work done on one rank only between steps (logging, checkpointing, evaluation
  under `if rank == 0:`): move it out of the step, or spread it over the ranks.""",
)


RANK_PAUSE = FindingKind(
    id="rank-pause",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""One rank made the others wait once in the compared steps (an evaluation or a checkpoint
on that rank, once per epoch) and kept up at every other step: not a straggler. The title says
how long the pause was.""",
    evidence="""`rank`, `pause ms`, `step index in the compared window`, `steps compared`, `steps it was late
at` (above the noise floor: 1 or none), `late floor ms`, `others' waiting share of the measured time`.""",
    title="rank {rank} made the others wait {pause_ms:.0f} ms once, at 1 of the {steps} steps compared "
    "(an evaluation or checkpoint on that rank?); at the other steps it kept up: not a straggler",
    why="One pause on one rank costs the others that pause once; a straggler is late step after step. "
    "Seen at more than {isolated} of the compared steps, it would be reported as one.",
    fix="nothing to do if rank {rank} evaluates or saves on its own now and then; to spread it, run the "
    "evaluation on every rank (each on its shard) or save asynchronously",
    more_why="""A pause on one rank costs the others that pause once; a straggler is late step after step.
Seen at more than one of the compared steps, the same lateness is reported as
[rank-straggler](rank-straggler.md), with a speed-up bounded by the share of the measured time
the others spent waiting.""",
    more_fix="""Nothing, when that rank evaluates or saves on its own now and then. To spread it: run the
evaluation on every rank, each on its shard, or save the checkpoint asynchronously.""",
)


COLLECTIVE_WAIT = FindingKind(
    id="collective-wait",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""Every rank, even the last to arrive, spends half of each step or more (and at least 10 ms)
waiting inside collectives, and no rank arrives late: the transfer itself is what the ranks
wait for.""",
    evidence="`wait ms per step` (median over the ranks), `step ms`, `share of the step`, `latest rank` and its `late ms per step`, `steps compared`.",
    title="every rank waits {wait_ms:.0f} ms per step ({share:.0%} of the step) inside collectives, "
    "with no rank late: the transfer itself is slow",
    why="When no rank arrives late, the time inside collectives is the transfer: the link between the "
    "ranks (or the backend's path over it) is slower than the compute it should overlap. (CPU ranks "
    "on a machine with fewer free cores than ranks also wait here, for the scheduler.)",
    fix="measure the links: gpudoctor allreduce (and gpudoctor allreduce --bisect to find the slow rank or link)",
    more_why="""When the ranks arrive together and still wait, the time goes into moving the bytes: a slow
or misconfigured link between the ranks (TCP instead of InfiniBand, NCCL falling back to
sockets, a PCIe path instead of NVLink), or a backend path slower than the compute it should
overlap.""",
    more_fix="""Measure the links, and find the slow one:

```sh
gpudoctor allreduce
gpudoctor allreduce --bisect
```""",
)


ALLREDUCE_SLOW_RANK = FindingKind(
    id="allreduce-slow-rank",
    severity=Severity.WARN,
    area="allreduce",
    emitted_by="[`gpudoctor allreduce --bisect`](../commands/allreduce.md#finding-the-slow-rank-or-link---bisect)",
    summary="""Timed in pairs, every all-reduce a rank (or every rank of one node) takes part in is slow
(each pair timed twice and compared only with pairs of its own kind (inside a node, across
nodes): slow in both passes and again when rechecked (timed twice more after a pause), above the fastest quarter of its kind by the run's noise floor and
then 3× more (margin 200%), and by 1 ms or more), and the pairs without it are not: that rank or node is what slows
the job's collectives. The title states the noise floor and the margin.""",
    evidence="""`pairs` (measured), `kinds` (per kind of pair, `inside a node` / `across nodes` / `pairs`
where hosts are unknown: `pairs`, `baseline us` (the fastest quarter of their times), `noise floor %`
(the upper quartile of how far each pair's two passes disagree), `limit us`), `margin %`,
`slow pairs` (`"a-b: T us, again T2 us, rechecked T3 us"`, the slowest first), `rechecked` (every pair
slow in both passes, timed twice more after a pause: the faster of those two is T3), `bytes` (the all-reduce each pair
timed: 16 MiB on GPUs, 64 KiB on CPU), `ranks`, `nodes`.""",
    title="{who}: every all-reduce with it is slow in both passes (up to {against})",
    why="A collective runs at the speed of its slowest member: one slow rank slows every all-reduce of the job.",
    checked="""After the sweep the ranks time the same all-reduce in every pair (n−1 rounds of disjoint
pairs, all at once; above 16 ranks each rank with its two ring neighbours, 2 or 3 rounds),
then every round again, so the time taken is bounded and every pair has a repeat; a pair slow
in both passes is timed twice more after a 0.2 s pause (a burst of the host's other work can span
both passes, which are milliseconds apart) and is slow only if it still is. A slow rank
makes every pair it is in slow; a slow link only the pairs across it. Measured with
`benchmarks/bisect_control.py` on a loaded 2-core host (two busy loops beside the ranks, 64 KiB,
gloo): no slow verdict in 30 unshaped control runs (20 of 4 ranks, 10 of 3), where the rule
before the repeat and the floor gave one in 6 of 10; a slowed link named in 12 of 13 runs and a
slowed rank in 12 of 13 (the misses said *no pair stands out beyond the noise*, with a floor
above 100 %). With the recheck (2026-11-30; three busy loops, 3 ranks): no slow verdict in 20
controls, the slowed link named in 6 of 6 and the slowed rank in 6 of 6; a 3-node control on
CI's busy cores that had been called a slow link before it is `tests/controls`' CI_CONTROL_3.""",
    fix="gpudoctor check on {nodes} (a throttled or slower GPU, a busy host, a NIC at lower speed); to confirm, run the job without rank(s) {ranks}",
)


ALLREDUCE_SLOW_LINK = FindingKind(
    id="allreduce-slow-link",
    severity=Severity.WARN,
    area="allreduce",
    emitted_by="[`gpudoctor allreduce --bisect`](../commands/allreduce.md#finding-the-slow-rank-or-link---bisect)",
    summary="""Timed in pairs, the all-reduces between some ranks are slow (each pair timed twice and compared only with pairs of its own kind (inside a node, across
nodes): slow in both passes and again when rechecked (timed twice more after a pause), above the fastest quarter of its kind by the run's noise floor and
then 3× more (margin 200%), and by 1 ms or more) while
each of those ranks is fast with the others: the path between them is slow. The title states
the noise floor and the margin.""",
    evidence="""`pairs` (measured), `kinds` (per kind of pair, `inside a node` / `across nodes` / `pairs`
where hosts are unknown: `pairs`, `baseline us` (the fastest quarter of their times), `noise floor %`
(the upper quartile of how far each pair's two passes disagree), `limit us`), `margin %`,
`slow pairs` (`"a-b: T us, again T2 us, rechecked T3 us"`, the slowest first), `rechecked` (every pair
slow in both passes, timed twice more after a pause: the faster of those two is T3), `bytes` (the all-reduce each pair
timed: 16 MiB on GPUs, 64 KiB on CPU), `links` (`"rank a (host) - rank b (host): T us"`).""",
    title="{count} slow link(s) between ranks, the slowest {slowest}: {against}",
    why="Only the all-reduces across these ranks are slow: the path between them (a NIC, a switch port, a PCIe or NVLink path, a socket interface chosen by NCCL_SOCKET_IFNAME) is slower than the others.",
    fix="compare the two ends: gpudoctor check on both nodes (NIC speed, NCCL_SOCKET_IFNAME, NCCL_IB_HCA); NCCL_DEBUG=INFO shows the transport each pair uses",
)


ALLREDUCE_BISECT = FindingKind(
    id="allreduce-bisect",
    severity=Severity.INFO,
    area="allreduce",
    emitted_by="[`gpudoctor allreduce --bisect`](../commands/allreduce.md#finding-the-slow-rank-or-link---bisect)",
    title={
        "nothing-to-compare": "nothing to compare: no pair of {ranks} ranks has another of its kind timed twice ({alone}); --bisect needs 3 ranks on one node, or 2 pairs across nodes",
        "within-noise": "no pair of {ranks} ranks stands out beyond the noise ({noise}): {kinds}",
        "undecided": "pair {slowest} is slow, but {between} is neither slow nor fast ({noise}): a slow rank or a slow link, not decided",
    },
    why={
        "undecided": "A slow link slows only the pairs across it and leaves the other pairs of its ranks at the baseline; "
        "a slow rank slows every pair it is in. A pair between the two (above its kind's baseline and noise floor, "
        "below the limit) fits both, as a busy host's noise does: naming a link would be a guess.",
    },
    fix={
        "undecided": "gpudoctor allreduce --nproc {ranks} --bisect --iters 20   # on an idle host: more iterations narrow the noise floor",
    },
    summary="""No pair stands out beyond the noise: every pair, timed twice, stays within its kind's
(inside a node, across nodes) baseline times the run's noise floor and the margin; the title
says *no pair stands out beyond the noise (floor X%, margin 200%)*. Or there is nothing to
compare: a kind of pair with one pair only (2 ranks; 2 nodes of one rank each) is its own
baseline, and the title says so. Or the slow pairs point at a link, but another pair of the
same ranks sits between fast and slow: a slow rank and a slow link both fit, and the title says
*not decided* (a loaded host made one of a slow rank's pairs look fast enough). A pair slow in
both passes but fast when rechecked is not slow: the title names it (*N was slow in both passes,
not when rechecked*).""",
    evidence="""`pairs` (measured), `kinds` (per kind of pair, `inside a node` / `across nodes` / `pairs`
where hosts are unknown: `pairs`, `baseline us` (the fastest quarter of their times), `noise floor %`
(the upper quartile of how far each pair's two passes disagree), `limit us`), `margin %`,
`slow pairs` (`"a-b: T us, again T2 us, rechecked T3 us"`, the slowest first), `rechecked` (every pair
slow in both passes, timed twice more after a pause: the faster of those two is T3), `bytes` (the all-reduce each pair
timed: 16 MiB on GPUs, 64 KiB on CPU).""",
    more_why="""A slow rank, node or link makes every collective of the job that crosses it slow; pairs
that all take about the same time rule that out (look at the compute, or at
[rank-straggler](rank-straggler.md) under `gpudoctor run`, instead).""",
    more_fix="Nothing to fix. A slow rank or link is reported as [`allreduce-slow-rank`](allreduce-slow-rank.md) or [`allreduce-slow-link`](allreduce-slow-link.md).",
)
