"""torch.distributed backends: which exist, and which one to use for what.
Rule of thumb: NCCL for GPU tensors, gloo for CPU tensors, MPI only when torch
was built with it."""

from __future__ import annotations

from gpudoctor.checks.platform import WINDOWS, family
from gpudoctor.checks.wording import plural
from gpudoctor.core.findings import Finding, Severity, ok
from gpudoctor.probe.facts import Facts
from gpudoctor.catalog import fix, why

AREA = "backends"


def _cuda_devices(facts: Facts) -> int:
    t = facts.torch
    if t.is_available is True and isinstance(t.device_count, int):
        return t.device_count
    return 0


def check_backends(facts: Facts) -> list[Finding]:
    t = facts.torch
    if not t.imported:
        return []
    if t.distributed is not True or not isinstance(t.backends, dict):
        return [
            Finding(
                id="distributed-unavailable",
                severity=Severity.ERROR,
                title="torch.distributed is not available in this torch build",
                evidence={"torch": str(t.version), "torch.distributed.is_available()": str(t.distributed)},
                why=why("distributed-unavailable"),
                fix=fix("distributed-unavailable"),
                area=AREA,
            )
        ]
    have = t.backends
    gpus = _cuda_devices(facts)
    available = {name: on for name, on in have.items()}
    findings: list[Finding] = []
    if have.get("gloo"):
        findings.append(ok("backend-gloo", "gloo is available (CPU tensors; works anywhere)", AREA, **available))
    else:
        findings.append(
            Finding(
                id="gloo-missing",
                severity=Severity.WARN if have.get("nccl") else Severity.ERROR,
                title="The gloo backend is not available in this torch build",
                evidence=available,
                why=why("gloo-missing"),
                fix=fix("gloo-missing"),
                area=AREA,
            )
        )
    if gpus:
        if have.get("nccl"):
            findings.append(ok("backend-nccl", f"NCCL {t.nccl} is available for GPU tensors", AREA, **available))
        elif family(facts) == WINDOWS:
            findings.append(
                Finding(
                    id="nccl-missing",
                    severity=Severity.INFO,
                    title=f"torch sees {gpus} CUDA GPU(s); NCCL is not built for Windows, so GPU collectives use gloo",
                    evidence={**available, "CUDA (build)": t.cuda, "GPUs torch sees": gpus, "platform": facts.system.platform},
                    why=why("nccl-missing", "windows"),
                    fix=fix("nccl-missing", "windows"),
                    area=AREA,
                )
            )
        else:
            findings.append(
                Finding(
                    id="nccl-missing",
                    severity=Severity.ERROR,
                    title=f"torch sees {gpus} CUDA GPU(s) but NCCL is not available",
                    evidence={**available, "CUDA (build)": t.cuda, "GPUs torch sees": gpus},
                    why=why("nccl-missing", "not-built"),
                    fix=fix("nccl-missing", "not-built"),
                    area=AREA,
                )
            )
    findings.append(_choice(facts, gpus, have))
    return findings


def _choice(facts: Facts, gpus: int, have: dict[str, bool]) -> Finding:
    extras = [name for name in ("mpi", "ucc") if have.get(name)]
    evidence = {
        "GPU tensors": "nccl" if have.get("nccl") else "no NCCL: gloo (slow) or none",
        "CPU tensors": "gloo" if have.get("gloo") else "none",
        "also built in": extras or "none",
    }
    if gpus == 0 or not have.get("nccl"):
        where = "no CUDA GPU for torch" if gpus == 0 else "no NCCL"
        title = f"{where[0].upper()}{where[1:]}: `allreduce` and `train-smoke` will run on CPU with gloo"
    else:
        ranks = "1 rank" if gpus == 1 else f"up to {gpus} ranks"
        title = (
            f"{plural(gpus, 'GPU')}: `allreduce` and `train-smoke` will use NCCL for {ranks}, "
            "one GPU each, and gloo on CPU beyond that"
        )
    return Finding(id="backend-choice", severity=Severity.INFO, title=title, evidence=evidence, area=AREA)


CHECKS = (check_backends,)
