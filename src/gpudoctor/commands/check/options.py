"""What `gpudoctor check` was asked to do, and the one check of it that the CLI
and the Python API both run (a UsageError naming the CLI's flag)."""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.core.usage import UsageError

MIN_TIMEOUT_S = 1.0


@dataclass(frozen=True, kw_only=True)
class Options:
    """Its defaults are the CLI's flags' and the Python API's (cli/check.py, api.check)."""

    facts: tuple[str, ...] = ()  # snapshots saved with `check --json`, one per node; () probes this machine
    visible: str | None = None  # probe as if CUDA_VISIBLE_DEVICES were this
    timeout: float = 180.0  # in a torchrun/SLURM job: how long the ranks wait for each other's nodes


def check_options(o: Options) -> None:
    if not o.timeout >= MIN_TIMEOUT_S:
        raise UsageError(f"--timeout must be at least {MIN_TIMEOUT_S:g} second (got {o.timeout:g})")
    if o.facts and o.visible is not None:
        raise UsageError("--visible probes this machine; it cannot be combined with --facts")
