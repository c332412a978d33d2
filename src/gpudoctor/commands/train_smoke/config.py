"""The reference job's settings, and the thresholds the verifications state.

The job is small on purpose: a 2-layer MLP learning a fixed linear teacher
(y = x @ w) from synthetic data, so there is nothing to download, every rank can
rebuild any sample from the seed, and the loss has a known floor (0).
"""

from __future__ import annotations

from dataclasses import dataclass

# What the verifications promise, stated in the report.
LEARNING_FACTOR = 10.0  # the evaluation loss must fall at least this many times
# The learning verification can only judge runs long enough to learn: measured
# (CPU, gloo, default batch 64; `--nproc` 1, 2 and 8 simulated) the evaluation loss
# falls 6-8x in 20 steps (so a healthy job failed), 13-24x in 30, 34-59x in 40
# and 35-93x in 50. 40 steps leave a 3x margin over LEARNING_FACTOR.
MIN_STEPS = 40
# Below this global batch (batch size x ranks) the learning rate shrinks in proportion:
# with lr 0.05 a global batch of 8 or less diverges to NaN however many steps it runs.
# Each step then learns less, so the steps needed grow in the same proportion.
REFERENCE_BATCH = 64
GRAD_TOLERANCE = 1e-4  # max |update_ddp - update_ref| / max |update_ref|, float32
GRAD_TOLERANCE_AMP = 5e-2  # the same under autocast (bf16 / fp16 matmuls)
OUTPUT_TOLERANCE = 1e-6  # reloaded checkpoint vs live model, max |output difference|
SYNC_POINTS = 4  # parameter digests compared across ranks this many times during training

# Fault kinds this command adds to the launcher's generic ones (crash, hang, raise, nojoin).
FAULT_NOSYNC = "nosync"  # the rank's gradients are never averaged into its own parameters
FAULT_BADGRAD = "badgrad"  # the rank corrupts (halves) its gradient before the all-reduce
FAULT_SAVEALL = "saveall"  # the rank saves the checkpoint too, not only rank 0
SMOKE_FAULTS = (FAULT_NOSYNC, FAULT_BADGRAD, FAULT_SAVEALL)
# The rank hangs where its DataLoader workers are measured, after every verification's
# data is in: the watchdog stops the job, and the verifications done are still shown.
FAULT_HANGWORKERS = "hangworkers"
CHECKPOINT_NAME = "train-smoke.pt"


@dataclass(frozen=True, kw_only=True)
class SmokeConfig:
    """Everything a rank needs; the ranks get it as it is (run_rank's `cfg`), through
    the codec. Its defaults are the command's (options.py, the CLI's flags, the API)."""

    nproc: int = 2
    backend: str = "gloo"  # resolved: "gloo" | "nccl"
    device: str = "cpu"  # resolved: "cpu" | "cuda"
    steps: int = 200
    batch_size: int = 64
    num_workers: int = 0
    amp: bool = False
    checkpoint_path: str = ""  # where rank 0 saves; "" = a file in the run directory
    timeout_s: float = 120.0
    compare_dp: bool = False
    # The job itself: fixed so runs are comparable across machines.
    dataset_size: int = 4096
    features: int = 32
    hidden: int = 64
    lr: float = 0.05
    momentum: float = 0.9
    seed: int = 0
    eval_size: int = 1024
    worker_epochs: int = 2  # at most, epochs timed with persistent_workers off (train_smoke/workers.py)
    gather: bool = False  # join mode: ranks all-gather their results (no supervisor to collect them)

    @property
    def global_batch(self) -> int:
        return self.batch_size * self.nproc

    @property
    def step_lr(self) -> float:
        """The learning rate the optimizer uses: `lr`, scaled down for a small global batch."""
        return self.lr * min(1.0, self.global_batch / REFERENCE_BATCH)

    @property
    def min_steps(self) -> int:
        """The fewest steps the learning verification can judge at this global batch."""
        return -(-MIN_STEPS * REFERENCE_BATCH // min(self.global_batch, REFERENCE_BATCH))

    @property
    def grad_tolerance(self) -> float:
        return GRAD_TOLERANCE_AMP if self.amp else GRAD_TOLERANCE


def no_full_batch(global_batch: int, dataset_size: int) -> str:
    """Why the DataParallel loader (drop_last) would yield no batch at all, or ""."""
    if global_batch <= dataset_size:
        return ""
    return (f"a global batch of {global_batch} is more than the {dataset_size} samples of the smoke dataset: "
            "DataParallel's loader drops the incomplete batch and has nothing to train on")
