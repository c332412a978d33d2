"""Findings in the area "gpudoctor"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "gpudoctor"
EMITTED_BY = "`gpudoctor allreduce` and `gpudoctor train-smoke`, first in the report, when run with the hidden test hook `--fault RANK:KIND,...`, or when `GPUDOCTOR_FAULT` was in the environment and was ignored"


FAULT_INJECTED = FindingKind(
    id="fault-injected",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""gpudoctor's own tests make ranks fail on purpose (`--fault 1:hang` hangs rank 1,
`1:wrong` corrupts its all-reduce, ...). Only the flag does it: a `GPUDOCTOR_FAULT` variable
inherited from a shell or a job script is dropped before any rank starts, and said here, so that
no variable can fake a hardware verdict.""",
    evidence="`fault` (the flag's value) or `ignored` (the variable that was not acted on).",
    title={
        "flag": "a fault was injected on purpose (--fault {spec}): the findings below are about it",
        "ignored": "GPUDOCTOR_FAULT={spec} in the environment was ignored: only --fault injects a fault",
    },
    why="A fault injected on purpose makes the report describe that fault, not the machine.",
    fix="for a verdict on the machine itself, run without --fault (and unset GPUDOCTOR_FAULT)",
)


CHECK_FAILED = FindingKind(
    id="check-failed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md)",
    summary="One of gpudoctor's own checks raised on these facts; the other checks still ran.",
    evidence="`check` (which one), `error`.",
    title="gpudoctor's check {check} failed on these facts: {error}",
    why="A bug in gpudoctor, or a facts snapshot it does not understand; the other checks still ran.",
    fix="gpudoctor check --json > facts.json  # and attach it to a gpudoctor issue",
)
