"""Findings in the area "system"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="container-detected",
        severity="info",
        area="system",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="gpudoctor runs inside a container (`/.dockerenv`, `/run/.containerenv`, Kubernetes, or the init process's cgroup say so).",
        evidence="`hints`: what gave it away.",
        why="In a container the GPUs, `/dev/shm`, the network interfaces and the visible processes are what the container was given, not what the host has.",
        fix="Nothing to fix; when something is missing, look at the container's options (`--gpus`, `--shm-size`, `--ipc`, `--network`).",
    ),
    FindingDoc(
        id="cpu-count",
        severity="ok / info",
        area="system",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="How many CPUs this process may use. `info` when the CPU affinity is restricted (SLURM, `taskset`, a container's cpuset) to fewer than the machine has.",
        evidence="`logical`, `physical`, `usable (affinity)`, `OMP_NUM_THREADS`.",
        why="`os.cpu_count()` reports the machine, not what the process may use: size DataLoader workers and `OMP_NUM_THREADS` per rank from the usable count.",
        fix="""Nothing to fix; size workers from the usable CPUs:

```python
num_workers = len(os.sched_getaffinity(0)) // local_world_size
```""",
        says="A scheduler (SLURM, taskset, a container's cpuset) limits the CPUs; size DataLoader workers and OMP_NUM_THREADS per rank from the usable count, not os.cpu_count().",
    ),
    FindingDoc(
        id="open-files-limit-low",
        severity="warn",
        area="system",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The soft open-files limit is below 4096.",
        evidence="`soft limit`, `hard limit`.",
        why="With the default `file_descriptor` sharing strategy, every tensor a DataLoader worker sends holds a descriptor until it is received; a few workers with prefetching exceed a low limit and fail with *Too many open files*.",
        fix="""Raise the soft limit up to the hard one; if the hard limit is too low, change the strategy:

```sh
ulimit -n 65536
```

```python
torch.multiprocessing.set_sharing_strategy("file_system")
```""",
        says="With the default file_descriptor sharing strategy every tensor a worker sends holds a file descriptor until it is received; several workers with prefetching exceed a low limit.",
        fix_cases={
            "raise": "ulimit -n {target}",
            "share-files": "torch.multiprocessing.set_sharing_strategy('file_system')  # the hard limit is too low to raise",
        },
    ),
    FindingDoc(
        id="open-files-limit",
        severity="ok",
        area="system",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The open-files limit (`ulimit -n`) is at least 4096, or unlimited.",
        evidence="`soft limit`, `hard limit`.",
        why="DataLoader workers hold a file descriptor per tensor in flight with the default sharing strategy.",
        fix="Nothing to fix. A low one is reported as [`open-files-limit-low`](open-files-limit-low.md).",
    ),
    FindingDoc(
        id="ram-size",
        severity="ok",
        area="system",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The machine's memory, total and available.",
        evidence="`total`, `available`.",
        why="Each rank and each DataLoader worker holds its own copy of what it loads.",
        fix="Nothing to fix.",
    ),
    FindingDoc(
        id="shm-size",
        severity="ok",
        area="system",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="`/dev/shm` is at least 1 GiB.",
        evidence="`/dev/shm size`, `/dev/shm free`, `container`.",
        why="DataLoader workers hand batches to the main process through shared memory; NCCL uses it between local ranks.",
        fix="Nothing to fix. A small one is reported as [`shm-too-small`](shm-too-small.md).",
    ),
    FindingDoc(
        id="shm-too-small",
        severity="warn",
        area="system",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="`/dev/shm` is smaller than 1 GiB (Docker's default is 64 MiB).",
        evidence="`/dev/shm size`, `/dev/shm free`, `container`.",
        why="DataLoader workers pass each batch through shared memory; a small `/dev/shm` ends in *Bus error* or *DataLoader worker (pid …) is killed by signal*. NCCL's shared-memory transport between ranks on one node also lives there.",
        fix="""```sh
docker run --shm-size=16g ...      # or --ipc=host
sudo mount -o remount,size=16G /dev/shm   # on a host
```""",
        says="Workers pass each batch to the main process through shared memory; a small /dev/shm (Docker's default is 64 MiB) ends in 'Bus error' or 'DataLoader worker ... killed'. NCCL also uses it between ranks.",
        does="docker run --shm-size=16g ...  # or --ipc=host; on a host: sudo mount -o remount,size=16G /dev/shm",
    ),
)
