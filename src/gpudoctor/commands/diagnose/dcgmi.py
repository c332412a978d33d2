"""A pasted DCGM report: `dcgmi diag` (a test per row, Pass / Fail / Skip, then the report's
Warning lines) or `dcgmi health -c` (Overall Health: Healthy / Warning / Failure). DCGM gives
its own verdict, so a failed test is an error and a health warning a warning. A `dcgmi dmon`
sample ("#Entity  SMACT ...", then a row per GPU and sample) whose field reads N/A on every row
is a field DCGM did not collect (a warning; NVIDIA/DCGM#244).

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
ANCHORS = (b"| Diagnostic ", b"Health Monitor Report", b"#Entity")
# `dcgmi dmon -e IDS`: its header names the fields ("#Entity    SMACT  SMOCC"), then a row per entity and sample
# ("GPU 0      N/A    0.012"); its units line ("ID") between them
DMON_HEADER = re.compile(r"^#\s*Entity\s+(?P<fields>[A-Z][A-Z0-9_]*(?:\s+[A-Z][A-Z0-9_]*)*)\s*$")
DMON_ROW = re.compile(r"^GPU(?:-I|-CI)?\s+\d+\s+(?P<values>\S.*)$")
DMON_ROWS = 2  # rows a field must read N/A on, all of them, to be one not collected


@dataclass
class DcgmReport:
    seen: bool = False  # the report's header was read
    failed: list[str] = field(default_factory=list)  # "GPU Memory: Fail - GPU: 3"
    warned: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # DCGM's own Warning lines
    in_warning: bool = False  # the last row read was a Warning (its text may wrap onto the next)
    dmon_fields: list[str] = field(default_factory=list)  # the fields of the dmon sample being read
    dmon_rows: int = 0
    dmon_read: set[str] = field(default_factory=set)  # the fields a row gave a value of
    dmon_seen: bool = False

    def dmon(self, text: str) -> bool:
        """A line of a `dcgmi dmon` sample; False when it is not one."""
        header = DMON_HEADER.match(text)
        if header:
            self.dmon_fields, self.dmon_rows, self.dmon_read, self.dmon_seen = header["fields"].split(), 0, set(), True
            return True
        row = DMON_ROW.match(text) if self.dmon_fields else None
        if row is None:
            return self.dmon_seen and text.strip() == "ID"
        self.dmon_rows += 1
        self.dmon_read.update(f for f, v in zip(self.dmon_fields, row["values"].split()) if v != "N/A")
        return True

    def line(self, text: str) -> bool:
        """A row of the report; False when it is not one."""
        if self.dmon(text):
            return True
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
        unread = [f for f in self.dmon_fields if f not in self.dmon_read] if self.dmon_rows >= DMON_ROWS else []
        if not rows and unread:
            return [GPU_DCGM_FAILED(
                case="dmon", severity=Severity.WARN, evidence={"failed": [f"{f}: N/A on every row" for f in unread], "source": "pasted dcgmi dmon output"},
                tests=", ".join(unread), rows=self.dmon_rows,
            )]
        if not rows:
            return []
        health = any(r.lower().startswith("overall health") for r in rows)
        named = [r for r in rows if not r.lower().startswith("overall health")] or rows
        return [GPU_DCGM_FAILED(
            case="health" if health else "diag", severity=Severity.ERROR if self.failed else Severity.WARN,
            evidence={"failed": rows, "warnings": self.warnings[:8], "source": "pasted dcgmi output"},
            tests="; ".join(r.split(":")[0] for r in named[:6]), overall="Failure" if self.failed else "Warning",
        )]
