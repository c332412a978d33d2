"""What one rank of `train-smoke` reports (job.run_rank's return value): frozen
dataclasses that cross the process boundary through probe/codec, and that the
pure verifications read. No torch here."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sharding:
    """The rank's DistributedSampler order for epochs 0 and 1 (with set_epoch),
    and for two passes of a twin sampler that never calls it."""

    dataset_size: int
    total_size: int
    epoch0: tuple[int, ...]
    epoch1: tuple[int, ...]
    unset0: tuple[int, ...]
    unset1: tuple[int, ...]


@dataclass(frozen=True)
class Learning:
    initial_loss: float  # evaluation loss before training
    final_loss: float  # and after it
    first_step_loss: float | None  # training loss of the first and last steps; None before any step
    last_step_loss: float | None
    epochs: int  # epochs started (the last one may be partial)


@dataclass(frozen=True)
class Sync:
    """What the ranks' parameters are compared on."""

    checkpoints: tuple[tuple[int, str], ...]  # (step, digest of every parameter) at SYNC_POINTS
    params: dict[str, str]  # parameter name -> digest after training
    spread: dict[str, float]  # parameter name -> largest element-wise difference between any two ranks


@dataclass(frozen=True)
class CheckpointReport:
    """Rank 0 saves and reloads the checkpoint; every rank says what files it wrote."""

    path: str
    wrote: tuple[str, ...]
    sha256: str | None = None  # rank 0: of the file it saved
    sha256_at_end: str | None = None  # rank 0: of the file after every rank passed the save point
    keys: tuple[str, ...] = ()  # rank 0: the saved state_dict's keys
    load_error: str | None = None  # rank 0: why the file did not reload into the plain model
    output_max_diff: float | None = None  # rank 0: reloaded model's outputs vs the live model's
    keys_at_end: tuple[str, ...] = ()  # rank 0, when the file changed: its keys then
    keys_at_end_error: str | None = None  # or why they could not be read


@dataclass(frozen=True)
class GradientCheck:
    """Rank 0: one DDP step against the same step of a single process on the N*B batch."""

    ranks: int
    batch_per_rank: int
    reference_batch: int
    max_abs_diff: float
    max_update: float
    relative_error: float
    worst_param: str
    per_param: dict[str, float]
    tolerance: float


# A rank's report before the DataLoader worker measurement, in the run folder: what a
# watchdog that stops the job during that measurement still shows (job.py).
PARTIAL = "rank{rank}.partial.json"


@dataclass(frozen=True)
class EpochTimes:
    startup_s: tuple[float, ...]  # per epoch, the time to its first batch
    epoch_s: tuple[float, ...]  # per epoch, the whole epoch


@dataclass(frozen=True)
class WorkerStartup:
    """DataLoader workers under spawn, persistent_workers off then on (--num-workers > 0)."""

    num_workers: int
    start_method: str
    epochs: int  # epochs timed with persistent_workers off (commands/train_smoke/workers.py)
    off: EpochTimes
    on: EpochTimes


@dataclass(frozen=True)
class Throughput:
    """The timed training loop (digest time taken out)."""

    steps: int
    batch_size: int
    seconds: float
    steps_per_s: float | None  # None when no time was measured
    samples: int
    samples_per_s: float | None


@dataclass(frozen=True)
class RankReport:
    """Everything one rank found out; the verifications read a list of these, one per rank."""

    rank: int
    world_size: int
    device: str
    backend: str
    amp: bool
    fault: str | None  # GPUDOCTOR_FAULT as this rank saw it
    threads: int
    sharding: Sharding
    learning: Learning
    sync: Sync
    checkpoint: CheckpointReport
    gradient: GradientCheck | None  # rank 0 only
    workers: WorkerStartup | None
    throughput: Throughput


@dataclass(frozen=True)
class AllRanks:
    """Join mode: every rank's report, all-gathered so each rank holds all of them."""

    ranks: tuple[RankReport, ...]


@dataclass(frozen=True)
class DataParallelRun:
    """--compare-dp: the same job under nn.DataParallel in one process (dp.run_dp)."""

    gpus: int
    steps: int
    global_batch: int
    seconds: float
    steps_per_s: float | None
    samples_per_s: float | None
    final_loss: float
