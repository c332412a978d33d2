"""Pure checks: Facts -> list[Finding]. No printing, no torch or pynvml
import; one module per area, each with a CHECKS tuple. A new check is one
function in its area's module and its name in that tuple."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gpudoctor.catalog.findings.gpudoctor import CHECK_FAILED
from gpudoctor.core.findings import Finding, Report

if TYPE_CHECKING:  # checks/allreduce.py is imported without the probe's facts
    from gpudoctor.probe.facts import Facts

Check = Callable[["Facts"], list[Finding]]


def all_checks() -> tuple[Check, ...]:
    """Every check, in report order (areas appear in the order of their first finding)."""
    from gpudoctor.checks import backends, environment, gpu_health, gpus, platform, system, toolchain, torch_build, visibility

    return (
        *platform.CHECKS,
        *torch_build.CHECKS,
        *toolchain.CHECKS,
        *gpus.CHECKS,
        *gpu_health.CHECKS,
        *visibility.CHECKS,
        *backends.CHECKS,
        *system.CHECKS,
        *environment.CHECKS,
    )


def run_checks(facts: Facts, checks: tuple[Check, ...] | None = None) -> tuple[Finding, ...]:
    findings: list[Finding] = []
    for check in checks or all_checks():
        try:
            findings.extend(check(facts))
        except Exception as exc:  # a snapshot from elsewhere may hold what a check did not foresee
            error = f"{type(exc).__name__}: {exc}"
            evidence = {"check": f"{check.__module__}.{check.__name__}", "error": error}
            findings.append(CHECK_FAILED(evidence=evidence, check=check.__name__, error=error))
    return tuple(findings)


def check_report(facts: Facts) -> Report:
    """What `gpudoctor check` and `gpudoctor.check()` return: every finding, and the
    facts they were judged on (the JSON's "facts")."""
    return Report("check", run_checks(facts), {"facts": facts.to_dict()})
