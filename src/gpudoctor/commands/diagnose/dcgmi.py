"""A pasted DCGM report: `dcgmi diag` (a test per row, Pass / Fail / Skip, then the report's
Warning lines) or `dcgmi health -c` (Overall Health: Healthy / Warning / Failure). DCGM gives
its own verdict, so a failed test is an error and a health warning a warning.

`NvidiaSmiReader` hands it the lines of its windows (the report's header is one of its anchors).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpudoctor.catalog.findings.gpu_health import GPU_DCGM_FAILED
from gpudoctor.core.findings import Finding, Severity

# `dcgmi diag`'s rows ("| GPU Memory | Fail - GPU: 3 |", then "| Warning | GPU 3 ... |") and
# `dcgmi health -c`'s ("| Overall Health | Warning |"), read once the report's header is seen
HEADER = re.compile(r"^\|\s*(?:Diagnostic\s*\|\s*Result|Health Monitor Report)\b")
ROW = re.compile(r"^\|\s*(?P<test>[A-Za-z][^|]*?)\s*\|\s*(?P<result>Fail(?:ure)?|Warning|Warn|Pass|Skip|Healthy)\b(?P<rest>[^|]*)")
WARNING = re.compile(r"^\|\s*(?:Warning|Error)\s*\|\s*(?P<text>[^|]+)")
MORE = re.compile(r"^\|\s*\|\s*(?P<text>[^|]+)")  # a row's text wrapped onto the next row
ANCHORS = (b"| Diagnostic ", b"Health Monitor Report")


@dataclass
class DcgmReport:
    seen: bool = False  # the report's header was read
    failed: list[str] = field(default_factory=list)  # "GPU Memory: Fail - GPU: 3"
    warned: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # DCGM's own Warning lines
    in_warning: bool = False  # the last row read was a Warning (its text may wrap onto the next)

    def line(self, text: str) -> bool:
        """A row of the report; False when it is not one."""
        if HEADER.match(text):
            self.seen = True
            return True
        if not self.seen or not text.startswith("|"):
            return False
        note = WARNING.match(text)
        if note:
            self.warnings.append(note["text"].strip())
            self.in_warning = True
            return True
        m = ROW.match(text)
        if m is None:
            more = MORE.match(text)
            if more and self.in_warning:
                self.warnings[-1] += " " + more["text"].strip()
            return True  # the report's rules and metadata
        self.in_warning = False
        result = m["result"]
        if result.startswith(("Fail", "Warn")):
            (self.failed if result.startswith("Fail") else self.warned).append(f"{m['test']}: {result}{m['rest'].rstrip()}")
        return True

    def findings(self) -> list[Finding]:
        rows = self.failed + self.warned
        if not rows:
            return []
        health = any(r.lower().startswith("overall health") for r in rows)
        named = [r for r in rows if not r.lower().startswith("overall health")] or rows
        return [GPU_DCGM_FAILED(
            case="health" if health else "diag", severity=Severity.ERROR if self.failed else Severity.WARN,
            evidence={"failed": rows, "warnings": self.warnings[:8], "source": "pasted dcgmi output"},
            tests="; ".join(r.split(":")[0] for r in named[:6]), overall="Failure" if self.failed else "Warning",
        )]
