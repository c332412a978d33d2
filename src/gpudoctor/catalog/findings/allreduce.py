"""Findings in the area "allreduce"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "allreduce"
EMITTED_BY = "[`gpudoctor allreduce`](../commands/allreduce.md)"


ALLREDUCE_BANDWIDTH = FindingKind(
    id="allreduce-bandwidth",
    title={
        "one-rank": "one rank: no data crosses a link (busbw 0); peak algbw {algbw:.2f} GB/s, latency {lat:.1f} µs at {lat_at}{noisy}",
        # one rank reducing in place: NCCL and gloo return at once, so size / time is
        # no bandwidth at all (an H200 "reached" 9,975 GB/s at 1G, gpu_truth 2026-11-28)
        "one-rank-in-place": "one rank, in place: nothing is sent or reduced, so no bandwidth is measured; a call costs {lat:.1f} µs at {lat_at}{noisy}",
        "ranks": "peak busbw {peak:.2f} GB/s at {at}; small-message latency {lat:.1f} µs at {lat_at}{noisy}",
    },
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The summary line: peak bus bandwidth (busbw) over the sweep and the size it was reached
at, and small-message latency (the median time of the smallest size). With one rank,
busbw is 0 (nothing crosses a link) and algbw is shown for the ops that copy a buffer
(all_gather, reduce_scatter); for all_reduce and broadcast, which one rank does in place
without moving anything, only the cost of a call is.""",
    evidence="`peak_busbw_gbps`, `peak_busbw_bytes`, `peak_algbw_gbps`, `latency_us`, `latency_bytes`.",
    more_why="""busbw = algbw × the op's bus factor (2(n−1)/n for all-reduce), which compares with the
link's speed whatever the number of ranks. Large messages show bandwidth, small ones
latency.""",
    more_fix="""Nothing to fix. On GPUs, [`allreduce-link-speed`](allreduce-link-speed.md) says whether
the peak fits the link.""",
)


ALLREDUCE_LATENCY_NOISY = FindingKind(
    id="allreduce-latency-noisy",
    title="small-message latency is noisy: {size} iterations took {fastest:.1f} to {p90:.1f} µs ({ratio:.1f}x apart); the median {lat:.1f} µs is not a stable figure",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The repeated iterations of the smallest size spread widely: their 90th percentile was 3×
or more the fastest one (with at least 5 iterations), so the small-message latency printed
(their median) is not a stable figure. The summary line then says "(noisy)".""",
    evidence="""`size`, `median_us`, `fastest_us`, `p90_us`, `spread` (p90 / fastest), `iterations`,
`load_average_1m` and `cores` (the CPUs gpudoctor may use) when the system says.""",
    why={
        "busy": "A small collective takes microseconds, so any pause of a rank shows in full: when repeated iterations of one size spread {spread:g}x or more, the figure says more about the machine than the link. Likely cause: the machine was busy: load average {load:.1f} on {cores} core(s), so other work took turns on the cores the ranks spin on.",
        "stolen": "A small collective takes microseconds, so any pause of a rank shows in full: when repeated iterations of one size spread {spread:g}x or more, the figure says more about the machine than the link. Likely cause: another job on the same cores, CPU frequency scaling or a shared VM steals time from the ranks between calls.",
    },
    fix="uptime; top -o %CPU   # then rerun when the cores are free: gpudoctor allreduce --iters 100",
)


ALLREDUCE_CORRECT = FindingKind(
    id="allreduce-correct",
    title="{op} results exact on all {world} rank(s) at {done} ({dtype}, checked element by element)",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""Every rank's result matched the exact expected values, element by element, at every
size that ran (or, after a failure, at the sizes that finished, as the title says).""",
    evidence="`sizes`: the sizes checked.",
    more_why="""The data is chosen so that the exact result is known in every dtype (small integers whose
sums bfloat16 and float16 hold exactly), so the check has no tolerance to hide behind.""",
    more_fix="Nothing to fix. A mismatch is reported as [`allreduce-wrong-result`](allreduce-wrong-result.md).",
)


ALLREDUCE_SHM = FindingKind(
    id="allreduce-shm",
    title={
        "small": "/dev/shm is only {size}: NCCL between {nproc} local ranks may fail or hang",
        "enough": "/dev/shm is {size}, enough for NCCL's shared-memory transport",
    },
    severity=Severity.WARN,
    also=(Severity.OK,),
    when="ok when large enough",
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Before an NCCL run with several ranks on this host: `/dev/shm` is smaller than 1 GiB (the same floor as `shm-too-small`).",
    evidence="`/dev/shm total` (bytes), `needed at least`, `ranks`.",
    why="NCCL's SHM transport and PyTorch's shared tensors live in /dev/shm; containers default to 64 MB, which runs out with several GPUs (bus errors, or a hang in the first collective).",
    fix="docker run --shm-size=8g ...   # or --ipc=host; on Kubernetes mount an emptyDir with medium: Memory",
)


ALLREDUCE_WRONG_RESULT = FindingKind(
    id="allreduce-wrong-result",
    title="rank {rank} got a wrong {op} result: {wrong} of {count} elements at {size}{more}",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""One rank got a wrong result: the title names the rank, the number of wrong elements out
of the buffer's count, and the first size it happened at (one finding per rank).""",
    evidence="`rank`, `dtype`, `wrong elements by size` (e.g. `4M=3, 16M=12`), `sizes checked`.",
    why="Every rank's data is chosen so the exact result is known; a mismatch means data was corrupted in transit or reduced wrongly (a faulty GPU, link or NIC, a broken NCCL build, or a bad protocol setting), and training on it silently diverges.",
    fix="gpudoctor allreduce --sizes {size} --iters 5   # rerun; if it repeats, on GPUs try NCCL_PROTO=Simple and NCCL_P2P_DISABLE=1 to find the transport, then check the GPU (nvidia-smi -q -d ECC)",
)


ALLREDUCE_SLOW_NODE = FindingKind(
    id="allreduce-slow-node",
    title={
        "none": "no node stands out across {count} nodes ({size}: {spans}; {noise})",
        "two": "{slow} ({noise})",
        "many": "{slow} ({noise})",
    },
    severity=Severity.WARN,
    also=(Severity.OK,),
    when="ok when no node stands out",
    area=AREA,
    emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md#per-node-figures-across-nodes) across nodes",
    summary="""Across nodes, one node's inter-node figure is below the other nodes': what its lowest rank
sends to the other nodes' lowest ranks (with 3 nodes or more, also what it receives) took
longer, in both of two passes, than the other nodes' baseline by the run's noise floor and
then 3× more (margin 200%), and by 1 ms or more. The title names the node and gives its
figure, the others' and the floor; with no node below, the ok line says so and gives the
floor.""",
    evidence="""`bytes` (the buffer each transfer moved: 16 MiB on GPUs, 64 KiB on CPU), `nodes` (per node,
`"ranks 0, 1: intra-node 0.128 GB/s busbw, sends 0.403 GB/s, receives 0.002 GB/s"`; the
report's `per_node` has the figures as numbers), `kinds` (per kind of
figure compared, `inter-node sends` and with 3 nodes or more `inter-node receives`: `baseline
us`, `noise floor %`, `limit us`), `margin %`, `slow` (the nodes named).""",
    why={
        "two": "A collective across nodes runs at the speed of its slowest path: every all-reduce of the job waits on what {node} sends. With two nodes that path is {node}'s way out or {other}'s way in; the sending end is where it is usually found.",
        "many": "A collective across nodes runs at the speed of its slowest path: every all-reduce of the job waits on {node}, whose best transfer to or from the other nodes ({other}) is slower than theirs.",
    },
    fix="on {nodes}: ip -s link; ethtool <nic> (speed, errors); ibstat (InfiniBand rate); tc qdisc show (a shaping qdisc); and that NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME name its fast interface",
    checked="""When the ranks span two hosts or more, after the sweep (and `--bisect`): each node's ranks
all-reduce the buffer among themselves (every node at once), then one rank per node sends it
to one rank of each other node, one direction at a time, in rounds of disjoint node pairs,
each send timed up to the receiver's one-element reply; all of it twice. A node's figure is
its best transfer, so a slow node at the other end does not make it slow. The figures are
judged as `--bisect` judges pairs: like with like, by what they took in both passes, against
the noise floor of the run (how far the two passes disagree) and the margin beyond it.
On one node nothing more is measured.""",
)
