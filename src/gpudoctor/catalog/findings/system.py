"""Findings in the area "system"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "system"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md)"


CONTAINER_DETECTED = FindingKind(
    id="container-detected",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="gpudoctor runs inside a container (`/.dockerenv`, `/run/.containerenv`, Kubernetes, or the init process's cgroup say so).",
    evidence="`hints`: what gave it away.",
    title="Running in a container: GPUs, /dev/shm and network are what the container was given",
    more_why="In a container the GPUs, `/dev/shm`, the network interfaces and the visible processes are what the container was given, not what the host has.",
    more_fix="Nothing to fix; when something is missing, look at the container's options (`--gpus`, `--shm-size`, `--ipc`, `--network`).",
)


CPU_COUNT = FindingKind(
    id="cpu-count",
    severity=Severity.OK,
    also=(Severity.INFO,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="How many CPUs this process may use. `info` when the CPU affinity is restricted (SLURM, `taskset`, a container's cpuset) to fewer than the machine has.",
    evidence="`logical`, `physical`, `usable (affinity)`, `OMP_NUM_THREADS`.",
    title={
        "all": "{logical} ({physical} physical)",
        "affinity": "This process may use {usable} of {logical} logical CPUs (CPU affinity is restricted)",
    },
    why="A scheduler (SLURM, taskset, a container's cpuset) limits the CPUs; size DataLoader workers and OMP_NUM_THREADS per rank from the usable count, not os.cpu_count().",
    more_fix="""Nothing to fix; size workers from the usable CPUs:

```python
num_workers = len(os.sched_getaffinity(0)) // local_world_size
```""",
)


OPEN_FILES_LIMIT_LOW = FindingKind(
    id="open-files-limit-low",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The soft open-files limit is below 4096.",
    evidence="`soft limit`, `hard limit`.",
    title="Open-files limit is {soft}: DataLoader workers may fail with 'Too many open files'",
    why="With the default file_descriptor sharing strategy every tensor a worker sends holds a file descriptor until it is received; several workers with prefetching exceed a low limit.",
    fix={
        "raise": "ulimit -n {target}",
        "share-files": "torch.multiprocessing.set_sharing_strategy('file_system')  # the hard limit is too low to raise",
    },
)


OPEN_FILES_LIMIT = FindingKind(
    id="open-files-limit",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The open-files limit (`ulimit -n`) is at least 4096, or unlimited.",
    evidence="`soft limit`, `hard limit`.",
    title="Open-files limit is {soft}",
    more_why="DataLoader workers hold a file descriptor per tensor in flight with the default sharing strategy.",
    more_fix="Nothing to fix. A low one is reported as [`open-files-limit-low`](open-files-limit-low.md).",
)


RAM_SIZE = FindingKind(
    id="ram-size",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The machine's memory, total and available.",
    evidence="`total`, `available`.",
    title="{total} RAM, {available} available",
    more_why="Each rank and each DataLoader worker holds its own copy of what it loads.",
    more_fix="Nothing to fix.",
)


SHM_SIZE = FindingKind(
    id="shm-size",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`/dev/shm` is at least 1 GiB.",
    evidence="`/dev/shm size`, `/dev/shm free`, `container`.",
    title="/dev/shm is {size}",
    more_why="DataLoader workers hand batches to the main process through shared memory; NCCL uses it between local ranks.",
    more_fix="Nothing to fix. A small one is reported as [`shm-too-small`](shm-too-small.md).",
)


SHM_TOO_SMALL = FindingKind(
    id="shm-too-small",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`/dev/shm` is smaller than 1 GiB (Docker's default is 64 MiB), or is large enough but has less than 1 GiB free when `check` looks.",
    evidence="`/dev/shm size`, `/dev/shm free`, `container`.",
    title={
        "small": "/dev/shm is only {size}: DataLoader workers will run out of shared memory",
        "full": "/dev/shm is {size} but only {free} is free: DataLoader workers may run out of shared memory",
    },
    why={
        "small": "Workers pass each batch to the main process through shared memory; a small /dev/shm (Docker's default is 64 MiB) ends in 'Bus error' or 'DataLoader worker ... killed'. NCCL also uses it between ranks.",
        "full": "Workers pass each batch to the main process through shared memory, and get only what is free: files left there (by another job, or a crashed run's NCCL segments and shared tensors) hold the rest. Seen now: whether they are still there when your job runs decides it.",
    },
    fix={
        "small": "docker run --shm-size=16g ...  # or --ipc=host; on a host: sudo mount -o remount,size=16G /dev/shm",
        "full": "ls -la /dev/shm  # remove what your stale jobs left (rm /dev/shm/<file>), then: gpudoctor check",
    },
)
