"""What gpudoctor knows about failures, shared by every command: log patterns
(what a line means, why, the fix; how matched lines become an ordered story) and
collective traces (`gpudoctor.knowledge.collectives`), used by `run` and `diagnose`.

    explain_lines(lines) -> list[Finding]   # cause first; what a rank's output means
    only_lost_a_peer(lines) -> bool          # the rank is a victim of another's failure

The patterns are imported on first use: a rank reads knowledge.collectives (through
launch/rundir.py) at start-up and needs none of them.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpudoctor.knowledge.story import Diagnosis, explain_lines, only_lost_a_peer

__all__ = ["Diagnosis", "explain_lines", "only_lost_a_peer"]


def __getattr__(name: str) -> Any:
    """The log patterns are imported when first asked for: a rank of the user's job
    imports knowledge.collectives, and must not pay for every pattern with it."""
    if name in __all__:
        from gpudoctor.knowledge import story

        return getattr(story, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
