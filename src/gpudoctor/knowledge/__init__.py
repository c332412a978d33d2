"""What gpudoctor knows about failures, shared by every command: log patterns
(what a line means, why, the fix; how matched lines become an ordered story) and
collective traces (`gpudoctor.knowledge.collectives`), used by `run` and `diagnose`.

    explain_lines(lines) -> list[Finding]   # cause first; what a rank's output means
    only_lost_a_peer(lines) -> bool          # the rank is a victim of another's failure
"""

from gpudoctor.knowledge.story import Diagnosis, explain_lines, only_lost_a_peer

__all__ = ["Diagnosis", "explain_lines", "only_lost_a_peer"]
