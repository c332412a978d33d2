"""DataLoader workers, shared memory and file descriptors."""

from gpudoctor.core.findings import Severity
from gpudoctor.knowledge.pattern import CAUSE, CONSEQUENCE, groups, pattern

E, W, I = Severity.ERROR, Severity.WARN, Severity.INFO

PATTERNS = [
    pattern(
        "dataloader-shm-bus-error",
        "dataloader",
        CAUSE,
        E,
        "a DataLoader worker ran out of shared memory (bus error)",
        r"Unexpected bus error encountered in worker|is killed by signal: Bus error",
        ("bus error", "Bus error"),
        why="""Workers hand batches to the main process through /dev/shm. When it is full (Docker's default is
        64 MB; many workers, big batches) a worker dies with SIGBUS.""",
        fix="docker run --shm-size=16g ... (or --ipc=host); or fewer num_workers / smaller prefetch_factor",
        examples=[
            ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).", "open-mmlab/mmsegmentation#1356"),
            ("RuntimeError: DataLoader worker (pid 7579) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.", "open-mmlab/mmsegmentation#1356"),
        ],
    ),
    pattern(
        "dataloader-worker-killed",
        "dataloader",
        CAUSE,
        E,
        "a DataLoader worker was killed by a signal",
        r"DataLoader worker \(pid (?P<pid>\d+)\) is killed by signal: (?P<signal>Killed|Segmentation fault|Aborted)|Unexpected segmentation fault encountered in worker",
        ("killed by signal", "segmentation fault encountered"),
        why="""'Killed' is almost always the kernel's OOM killer: the workers (each with a copy of the dataset)
        used up host RAM. A segmentation fault points at a native library in the dataset code.""",
        fix="""by the signal: Killed is the OOM killer (dmesg -T | grep -i 'killed process'; then fewer num_workers, lazy dataset loading, or
        more RAM); a segmentation fault (or Aborted) is native code in the dataset's __getitem__ or collate_fn, not memory: run with
        num_workers=0 so the crash happens in the main process with its frame (python -X faulthandler train.py), then fix what that
        library is given for this dataset (a grid or voxel size, an image size, a file it cannot decode) or its version""".replace("\n        ", " "),
        examples=[
            ("RuntimeError: DataLoader worker (pid 30001) is killed by signal: Killed.", "DataLoader error text (torch/utils/data/_utils/signal_handling.py)"),
            ("ERROR: Unexpected segmentation fault encountered in worker.", "DataLoader worker error text"),
        ],
        fields=groups,
    ),
    pattern(
        "shm-no-space",
        "dataloader",
        CAUSE,
        E,
        "/dev/shm is full",
        # older torch says only "unable to write to file </torch_...>" (at THAllocator.c): the same full /dev/shm
        r"unable to write to file </torch_\d+_\d+[^>]*>|/dev/shm.*No space left on device",
        ("No space left", "unable to write to file"),
        why="""torch passes tensors between processes through /dev/shm; it is full (Docker's 64 MB default,
        or leftovers from crashed runs).""",
        fix="df -h /dev/shm   # docker run --shm-size=16g (or --ipc=host); remove stale /dev/shm/torch_* files",
        examples=[
            ("RuntimeError: unable to write to file </torch_18692_1954506624>: No space left on device (28)", "torch shared-memory error text"),
            ("RuntimeError: unable to write to file </torch_15769_1517813162>", "MIC-DKFZ/nnUNet#294"),
            ("RuntimeError: unable to write to file </torch_76_3625483894> at /pytorch/aten/src/TH/THAllocator.c:383", "huaweicloud/dls-example#26"),
        ],
    ),
    pattern(
        "disk-full",
        "dataloader",
        CAUSE,
        E,
        "a disk is full (No space left on device)",
        r"\[Errno 28\] No space left on device|No space left on device",
        ("No space left",),
        why="""A write failed because the file system is full: checkpoints, logs, a cache (HF datasets, torch
        compile) or /tmp.""",
        fix="df -h   # free space or point checkpoints/caches (HF_HOME, TMPDIR) at a larger disk",
        examples=[
            ("OSError: [Errno 28] No space left on device", "Python OSError text"),
        ],
    ),
    pattern(
        "too-many-open-files",
        "dataloader",
        CAUSE,
        E,
        "the process ran out of file descriptors",
        r"Too many open files|unable to open shared memory object </torch_\d+_\d+> in read-write mode",
        ("Too many open files", "unable to open shared memory object"),
        why="""With the default 'file_descriptor' sharing strategy every tensor a worker sends holds a file
        descriptor; keeping many of them (appending batches to a list) or many workers exceeds `ulimit -n`.""",
        fix="torch.multiprocessing.set_sharing_strategy('file_system')  # or ulimit -n 65536",
        examples=[
            ("OSError: [Errno 24] Too many open files", "DeNA/HandyRL#121"),
            ("RuntimeError: unable to open shared memory object </torch_5535_1638182315> in read-write mode", "rusty1s/himp-gnn#7"),
        ],
    ),
    pattern(
        "dataloader-ancdata",
        "dataloader",
        CAUSE,
        E,
        "a worker's file descriptor was dropped (received 0 items of ancdata)",
        r"received 0 items of ancdata",
        ("ancdata",),
        why="""The main process could not receive the file descriptor a worker sent for a shared tensor: the
        open-files limit is exhausted (the same cause as 'Too many open files').""",
        fix="torch.multiprocessing.set_sharing_strategy('file_system')  # or ulimit -n 65536",
        examples=[
            ("RuntimeError: received 0 items of ancdata", "pytorch/pytorch#973"),
        ],
    ),
    pattern(
        "dataloader-timeout",
        "dataloader",
        CAUSE,
        E,
        "a DataLoader worker did not deliver a batch in time",
        r"DataLoader timed out after (?P<seconds>\d+) seconds",
        ("DataLoader timed out",),
        why="""The DataLoader's timeout= expired: a worker is stuck (a network file system, a deadlock in the
        dataset, a lock inherited across fork).""",
        fix="py-spy dump --pid <worker pid>   # see where the worker waits; raise timeout= only if loading is legitimately slow",
        examples=[
            ("RuntimeError: DataLoader timed out after 300 seconds", "DataLoader error text (torch/utils/data/dataloader.py)"),
        ],
        fields=groups,
    ),
    pattern(
        "dataloader-sampler-shuffle",
        "dataloader",
        CAUSE,
        E,
        "DataLoader got both a sampler and shuffle=True",
        r"sampler option is mutually exclusive with shuffle",
        ("mutually exclusive with shuffle",),
        why="""A DistributedSampler already shuffles (and shards) the data; DataLoader refuses shuffle=True with
        a sampler.""",
        fix="DataLoader(ds, sampler=DistributedSampler(ds, shuffle=True), shuffle=False)  # and sampler.set_epoch(epoch) every epoch",
        examples=[
            ("ValueError: sampler option is mutually exclusive with shuffle", "torch DataLoader error text"),
        ],
    ),
    pattern(
        "dataloader-worker-exited",
        "dataloader",
        CONSEQUENCE,
        E,
        "a data-loading worker (a DataLoader process, or a loader's background thread) ended unexpectedly",
        r"DataLoader worker \(pid(?:\(s\))? (?P<pids>[\d, ]+)\) exited unexpectedly(?: with exit code (?P<exitcode>-?\d+))?"
        # a worker that a stop from outside reached (SIGTERM to the job's processes): the stop is the cause
        r"|DataLoader worker \(pid (?P<terminated_pid>\d+)\) is killed by signal: (?P<signal>Terminated)"
        r"|OLMoThreadError: generator thread (?P<thread>.+?) failed",  # OLMo's loader threads: the thread's exception, re-raised
        ("exited unexpectedly", "OLMoThreadError", "killed by signal: Terminated"),
        why="""The main process noticed a data-loading worker died. The reason is printed before or with it: a bus error (shared
        memory), the OOM killer, or an exception inside the dataset code (a missing or unreadable data file, an I/O error on a
        shared filesystem, a sample that does not parse). Loaders that read in background threads (OLMo's) re-raise the
        thread's exception under their own name. A worker "killed by signal: Terminated" got SIGTERM, a stop sent from
        outside to the job's processes (a scheduler's cancel or time limit, a kill): that stop is the cause.""",
        fix="look for the worker's own error above (bus error, 'Killed', a traceback, the thread's exception logged with it); to see it directly, run with num_workers=0 (no loader threads or processes)",
        examples=[
            ("RuntimeError: DataLoader worker (pid(s) 3216) exited unexpectedly", "THU-DA-6D-Pose-Group/GDR-Net#16"),
            (
                "RuntimeError: DataLoader worker (pid 39424) exited unexpectedly with exit code 1. Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace.",
                "YuanGongND/ast#112",
            ),
            ("[2024-04-18 19:10:41] CRITICAL [olmo.util:158, rank=0] Uncaught OLMoThreadError: generator thread data thread 3 failed", "allenai/OLMo#552"),
            # heldout22w: https://github.com/TengFeiyang01/EAGNet/blob/7a1815b159d8b85408d1dfa940ef3523c6405fd4/logs/train.out
            ("RuntimeError: DataLoader worker (pid 4020138) is killed by signal: Terminated. ", "TengFeiyang01/EAGNet logs/train.out"),
        ],
        after=("dataloader-shm-bus-error", "dataloader-worker-killed", "shm-no-space", "host-oom-killer", "launcher-sigkill",
               "stop-signal-received", "slurm-job-cancelled", "slurm-time-limit", "batch-job-limit-killed", "launcher-terminated"),
        fields=groups,
    ),
]
