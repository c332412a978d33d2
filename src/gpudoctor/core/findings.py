"""The one vocabulary every command speaks: Severity, Finding, Report."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Severity(str, enum.Enum):
    OK = "ok"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return _ORDER[self]


_ORDER = {Severity.OK: 0, Severity.INFO: 1, Severity.WARN: 2, Severity.ERROR: 3}


@dataclass(frozen=True)
class Finding:
    """One diagnosis: what was seen, why it matters, and what to run about it.

    `id` is kebab-case and stable (documented in docs/findings/<id>.md); `area`
    groups findings in the report. `evidence` holds the raw values seen.
    """

    id: str
    severity: Severity
    title: str
    evidence: dict[str, Any] = field(default_factory=dict)
    why: str = ""
    fix: str = ""
    area: str = "general"

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity.value,
            "title": self.title,
            "evidence": self.evidence,
            "why": self.why,
            "fix": self.fix,
            "area": self.area,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Finding":
        return cls(
            id=d["id"],
            severity=Severity(d["severity"]),
            title=d.get("title", ""),
            evidence=dict(d.get("evidence") or {}),
            why=d.get("why", ""),
            fix=d.get("fix", ""),
            area=d.get("area", "general"),
        )


# The version of the --json documents' shape (render/json_schema.py, docs/schemas/): raised
# when a key is removed or changes meaning; adding a key keeps it.
SCHEMA_VERSION = 1


# Verdicts that do not decide, where "healthy" (exit 0, ok) would be the false answer: a
# log with no failure that does not show its run ending either (diagnose). Not errors: a
# problem is not found, but the run is not shown healthy; exit 1, "ok": false.
UNDECIDED = frozenset({"log-inconclusive"})
# A run the --timeout watchdog stopped while it was still moving: not hung, but not finished
# either, so never healthy; it exits 124 as timeout(1) would (core/exit_code.py), "ok": false.
UNFINISHED = frozenset({"timeout-still-progressing"})
# A hang or a GPU out of memory the reporter states beside a log that shows no error of it (diagnose's `log-said-hang`,
# `log-said-oom`): a warning, since no line of the log decides it, but a failed run: exit 1, "ok": false.
SAID_FAILED = frozenset({"log-said-hang", "log-said-oom"})
# What a GPU tool's snapshot pasted to `diagnose` shows that makes a fault likely, though a
# snapshot cannot prove it (checks/gpu_activity.py: ranks spinning in a collective, a rank idle
# beside its peers; a GPU row nvidia-smi could not read at all; the hardware warnings `check`
# also gives, a row remap waiting for a reset, clocks held down): as warnings in `diagnose` they
# mean the snapshot is not healthy, so exit 1, "ok": false. Their info cases, which do not
# decide, exit 0; in `check` the hardware warnings keep warn's exit 0.
SNAPSHOT_FAULTS = frozenset({
    "gpu-collective-spin", "gpu-rank-idle", "gpu-job-idle", "gpu-memory-uneven", "gpu-memory-without-process", "gpu-process-on-every-gpu",
    "gpu-reading-failed", "gpu-dcgm-failed",
    "gpu-row-remap-pending", "gpu-clocks-slowdown", "gpu-temperature-high", "gpu-pcie-link-degraded", "gpu-nvlink-degraded",
})

# What a GPU tool's snapshot pasted to `diagnose` shows of the GPUs' settings (checks/gpus.py, as `check` judges NVML's):
# MIG on, a compute mode that lets one process at a time use a GPU. Facts a job may have to fit, never a fault the
# snapshot shows: where nothing in the input decides the run, the undecided answer leads them (heldout10's healthy
# A100s in Exclusive_Process mode, nvitop's MIG test table), and a run's own failure still leads as it does.
SNAPSHOT_SETTINGS = frozenset({"mig-enabled", "gpu-compute-mode-restricted"})


@dataclass(frozen=True)
class Report:
    """What a command produced: its findings plus command-specific data
    (facts for `check`, results for `allreduce`, ...) that the JSON carries as
    top-level keys."""

    command: str
    findings: tuple[Finding, ...]
    data: dict[str, Any] = field(default_factory=dict)
    # Ctrl-C / SIGTERM stopped the work: the CLI exits 130 whatever was found.
    # Not in the JSON (the `launch-interrupted` finding says it there).
    interrupted: bool = False
    # The signal that stopped it (SIGINT, SIGTERM, SIGHUP); 0 when not known: taken as Ctrl-C.
    stop_signal: int = 0

    @property
    def ok(self) -> bool:
        """No error among the findings: what `--json` calls "ok" and exit code 0 means."""
        return not self.failed()

    def worst(self) -> Severity:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=Severity.OK)

    def failed(self, strict: bool = False) -> bool:
        limit = Severity.WARN if strict else Severity.ERROR
        return self.worst().rank >= limit.rank or any(
            f.id in UNDECIDED or f.id in UNFINISHED or f.id in SAID_FAILED or self._snapshot_fault(f) for f in self.findings
        )

    def _snapshot_fault(self, f: Finding) -> bool:
        return self.command == "diagnose" and f.id in SNAPSHOT_FAULTS and f.severity is Severity.WARN

    def counts(self) -> dict[str, int]:
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def to_dict(self, strict: bool = False) -> dict[str, Any]:
        from gpudoctor.core.version import __version__

        return {
            "gpudoctor": __version__,
            "schema_version": SCHEMA_VERSION,
            "command": self.command,
            "ok": not self.failed(strict),
            "findings": [f.to_dict() for f in self.findings],
            **self.data,
        }



def ok(id: str, title: str, area: str, **evidence: Any) -> Finding:
    """A passed check: a line with a tick and the evidence behind it."""
    return Finding(id=id, severity=Severity.OK, title=title, evidence=evidence, area=area)
