"""The CUDA compiler an extension build would use, against the CUDA torch was
built with (torch.utils.cpp_extension refuses another major version)."""

from __future__ import annotations

from gpudoctor.catalog.findings.torch import NVCC_TORCH_CUDA_MATCH, NVCC_TORCH_CUDA_MISMATCH
from gpudoctor.checks.torch_build import version_tuple
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.software import Nvcc



def check_nvcc(facts: Facts) -> list[Finding]:
    """Nothing without an nvcc, without a CUDA torch (a CPU or ROCm build compiles no
    CUDA extension against it) or without a version to compare."""
    software, t = facts.software, facts.torch
    if isinstance(software, Unavailable) or not isinstance(software.nvcc, Nvcc):
        return []
    if not t.imported or isinstance(t.hip, str) or not isinstance(t.cuda, str):
        return []
    nvcc = software.nvcc
    have, built = version_tuple(nvcc.release), version_tuple(t.cuda)
    if have is None or built is None:
        return []
    evidence = {"nvcc": nvcc.path, "found by": nvcc.found_by, "nvcc release": nvcc.release, "torch CUDA (build)": t.cuda}
    if have == built:
        return [NVCC_TORCH_CUDA_MATCH(evidence=evidence, release=nvcc.release, found_by=nvcc.found_by, cuda=t.cuda)]
    major = have[0] != built[0]
    case = "major" if major else "minor"
    cuda = ".".join(str(n) for n in built)
    return [NVCC_TORCH_CUDA_MISMATCH(
        case=case, evidence=evidence, severity=Severity.WARN if major else Severity.INFO,
        release=nvcc.release, path=nvcc.path, found_by=nvcc.found_by, torch_cuda=t.cuda, cuda=cuda,
    )]


CHECKS = (check_nvcc,)
