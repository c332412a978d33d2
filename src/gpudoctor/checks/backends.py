"""torch.distributed backends: which exist, and which one to use for what.
Rule of thumb: NCCL for GPU tensors, gloo for CPU tensors, MPI only when torch
was built with it."""

from __future__ import annotations

from gpudoctor.catalog.findings.backends import (
    BACKEND_CHOICE,
    BACKEND_GLOO,
    BACKEND_NCCL,
    DISTRIBUTED_UNAVAILABLE,
    GLOO_MISSING,
    NCCL_MISSING,
)
from gpudoctor.checks.platform import WINDOWS, family
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.probe.facts import Facts


def _cuda_devices(facts: Facts) -> int:
    t = facts.torch
    if t.is_available is True and isinstance(t.device_count, int):
        return t.device_count
    return 0


def check_backends(facts: Facts) -> list[Finding]:
    t = facts.torch
    if not t.imported or isinstance(t.distributed, Unavailable):
        return []  # not read: nothing says whether this build has torch.distributed
    if t.distributed is not True or not isinstance(t.backends, dict):
        return [DISTRIBUTED_UNAVAILABLE(evidence={"torch": str(t.version), "torch.distributed.is_available()": str(t.distributed)})]
    have = t.backends
    gpus = _cuda_devices(facts)
    available = {name: on for name, on in have.items()}
    findings: list[Finding] = []
    if have.get("gloo"):
        findings.append(BACKEND_GLOO(evidence=available))
    else:
        findings.append(GLOO_MISSING(severity=Severity.WARN if have.get("nccl") else Severity.ERROR, evidence=available))
    if gpus:
        missing = {**available, "CUDA (build)": t.cuda, "GPUs torch sees": gpus}
        if have.get("nccl"):
            findings.append(BACKEND_NCCL(evidence=available, nccl=t.nccl))
        elif family(facts) == WINDOWS:
            evidence = {**missing, "platform": facts.system.platform}
            findings.append(NCCL_MISSING(case="windows", severity=Severity.INFO, evidence=evidence, gpus=gpus))
        else:
            findings.append(NCCL_MISSING(case="not-built", evidence=missing, gpus=gpus))
    findings.append(_choice(facts, gpus, have))
    return findings


def _choice(facts: Facts, gpus: int, have: dict[str, bool]) -> Finding:
    extras = [name for name in ("mpi", "ucc") if have.get(name)]
    evidence = {
        "GPU tensors": "nccl" if have.get("nccl") else "no NCCL: gloo (slow) or none",
        "CPU tensors": "gloo" if have.get("gloo") else "none",
        "also built in": extras or "none",
    }
    if gpus == 0:
        return BACKEND_CHOICE(case="no-gpu", evidence=evidence)
    if not have.get("nccl"):
        return BACKEND_CHOICE(case="no-nccl", evidence=evidence)
    return BACKEND_CHOICE(case="one-gpu" if gpus == 1 else "gpus", evidence=evidence, gpus=gpus)


CHECKS = (check_backends,)
