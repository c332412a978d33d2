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
        "ranks": "peak busbw {peak:.2f} GB/s at {at}; small-message latency {lat:.1f} µs at {lat_at}{noisy}",
    },
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""The summary line: peak bus bandwidth (busbw) over the sweep and the size it was reached
at, and small-message latency (the median time of the smallest size). With one rank,
busbw is 0 (nothing crosses a link) and algbw is shown.""",
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
