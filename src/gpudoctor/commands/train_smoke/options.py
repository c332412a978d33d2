"""What `gpudoctor train-smoke` was asked to do, and the one check of it that the
CLI and the Python API both run: bad input is a UsageError naming the CLI's flag
(the CLI exits 2 with it, the API raises it as a ValueError), before any rank starts."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

from gpudoctor.commands.train_smoke.config import CHECKPOINT_NAME, LEARNING_FACTOR, SmokeConfig, no_full_batch
from gpudoctor.core.usage import UsageError
from gpudoctor.core.user_file import FileRefused, check_writable
from gpudoctor.launch.backend import BACKENDS, DEVICES, one_of
from gpudoctor.launch.capacity import nproc_problem

DEFAULT_NPROC = SmokeConfig.nproc
MAX_WORKERS = 64
MIN_TIMEOUT_S = 1.0


@dataclass(frozen=True, kw_only=True)
class Options:
    """The command line as typed; None where the default depends on the rest. Its
    defaults are the CLI's flags' and the Python API's (cli/train_smoke.py,
    api.train_smoke); those of the job itself are SmokeConfig's."""

    nproc: int | None = None  # ranks to start here (default DEFAULT_NPROC); ignored in a torchrun/SLURM job
    backend: str = "auto"
    device: str = "auto"
    steps: int | None = None  # default: SmokeConfig.steps, or the fewest the global batch needs
    batch_size: int = SmokeConfig.batch_size
    num_workers: int = SmokeConfig.num_workers
    amp: bool = SmokeConfig.amp
    save: str | None = None  # keep rank 0's checkpoint here (a directory gets train-smoke.pt)
    timeout: float = SmokeConfig.timeout_s
    compare_dp: bool = SmokeConfig.compare_dp
    fault: str | None = None  # hidden --fault SPEC: a test hook (launch/rank.adopt_fault)


def checkpoint_target(save: str) -> str:
    """The file --save names (a directory gets train-smoke.pt inside), if it can be written.
    A name ending in a separator is a directory even before it exists (`--save ./ckpt/`):
    it is made, private (0700), parents included."""
    path = Path(save).expanduser()
    if save.endswith(("/", os.sep)) and not path.is_dir():
        _make_folder(path, save)
    if path.is_dir():
        path = path / CHECKPOINT_NAME
    try:
        check_writable(str(path))
    except FileRefused as exc:
        raise UsageError(f"--save {save}: {exc.reason}") from None
    if path.exists() and not path.is_file():
        # Written in place it could not be read back, which is what the checkpoint check does.
        raise UsageError(f"--save {save}: not a regular file (a device or a pipe): the checkpoint is read back, give a file name")
    return str(path.resolve())


def _make_folder(path: Path, save: str) -> None:
    """Each missing folder down to `path`, mode 0700 (makedirs gives 0700 to the last only)."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except OSError as exc:
            raise UsageError(f"--save {save}: cannot create directory {folder} ({exc.strerror or exc})") from None
    if not path.is_dir():
        raise UsageError(f"--save {save}: {path} is not a directory")


def steps_for(steps: int | None, batch_size: int, world: int) -> int:
    """The steps to run: refuse a run too short for the learning verification to judge
    (config.py MIN_STEPS says what was measured); without --steps, the default or
    the fewest this global batch needs."""
    needed = SmokeConfig(nproc=world, batch_size=batch_size).min_steps
    if steps is None:
        return max(SmokeConfig().steps, needed)
    if steps < needed:
        raise UsageError(
            f"--steps {steps} is too few to judge learning: with a global batch of {batch_size * world} "
            f"({batch_size} x {world} ranks) a healthy job needs {needed} steps to show its loss falling "
            f"{LEARNING_FACTOR:g}x with margin; use --steps {needed} or more"
            + (" (or a larger --batch-size)" if needed > SmokeConfig().min_steps else "")
        )
    return steps


def check_options(o: Options, world: int | None = None) -> Options:
    """The options with every default filled in (nproc, steps, the --save file,
    backend and device normalised), or UsageError. `world` is the job's number of
    ranks when this process joins a torchrun/SLURM job; else it is --nproc."""
    backend, device = one_of("--backend", o.backend, BACKENDS), one_of("--device", o.device, DEVICES)
    if o.nproc is not None and (problem := nproc_problem(o.nproc)):
        raise UsageError(problem)
    if o.steps is not None and o.steps < 1:
        raise UsageError(f"--steps must be at least 1 (got {o.steps})")
    if o.batch_size < 1:
        raise UsageError(f"--batch-size must be at least 1 (got {o.batch_size})")
    if not 0 <= o.num_workers <= MAX_WORKERS:
        raise UsageError(f"--num-workers must be between 0 and {MAX_WORKERS} (got {o.num_workers})")
    if not o.timeout >= MIN_TIMEOUT_S:
        raise UsageError(f"--timeout must be at least {MIN_TIMEOUT_S:g} second (got {o.timeout:g})")
    save = checkpoint_target(o.save) if o.save else None
    nproc = DEFAULT_NPROC if o.nproc is None else o.nproc
    steps = steps_for(o.steps, o.batch_size, nproc if world is None else world)
    if o.compare_dp and (problem := no_full_batch(o.batch_size * nproc, SmokeConfig().dataset_size)):
        raise UsageError(f"--compare-dp with --batch-size {o.batch_size} x {nproc} ranks: {problem}; "
                         f"use --batch-size {SmokeConfig().dataset_size // nproc} or less")
    return replace(o, nproc=nproc, backend=backend, device=device, steps=steps, save=save)
