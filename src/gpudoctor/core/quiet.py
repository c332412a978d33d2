"""A Report the CLI does not print: that of a joined rank other than 0 (rank 0
reports for the whole job), or of a rank that could not take part at all.

The command decides that a rank is quiet; the CLI only reacts: it writes `said`
(one line, stderr) when there is one, and exits with `code`, or, when `code` is
None, with what the rank's own findings say (core/exit_code.report_exit). The
Python API returns it as any other Report.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.core.findings import Report


@dataclass(frozen=True)
class QuietReport(Report):
    said: str = ""  # why this rank failed, for stderr; "" when it has nothing to say
    code: int | None = None  # its exit code, when its findings do not decide it
