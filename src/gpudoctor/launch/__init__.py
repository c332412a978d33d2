"""The supervisor: spawn or join ranks, timeouts, per-rank failures."""

from gpudoctor.launch.rank import RankContext, join_context, parse_faults
from gpudoctor.launch.supervisor import (
    LaunchResult,
    RankOutcome,
    discard_run_dir,
    launch,
    launch_function,
)

__all__ = [
    "LaunchResult",
    "RankContext",
    "RankOutcome",
    "discard_run_dir",
    "join_context",
    "launch",
    "launch_function",
    "parse_faults",
]
