"""The CUDA compiler an extension build would use, against the CUDA torch was
built with (torch.utils.cpp_extension refuses another major version)."""

from __future__ import annotations

from gpudoctor.catalog import fix, why
from gpudoctor.checks.torch_build import version_tuple
from gpudoctor.core.findings import Finding, Severity, ok
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.software import Nvcc

AREA = "torch"


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
        return [ok("nvcc-torch-cuda-match", f"nvcc {nvcc.release} ({nvcc.found_by}) is torch's CUDA {t.cuda}", AREA, **evidence)]
    major = have[0] != built[0]
    title = (
        f"nvcc {nvcc.release} ({nvcc.path}, by {nvcc.found_by}) is not the CUDA {t.cuda} torch was built with: "
        + ("CUDA extensions will not build with it" if major else "extensions build with a warning")
    )
    cuda = ".".join(str(n) for n in built)
    if major:
        said, do = why("nvcc-torch-cuda-mismatch", "major"), fix("nvcc-torch-cuda-mismatch", "major", cuda=cuda, nvcc=nvcc.release)
    else:
        said, do = why("nvcc-torch-cuda-mismatch", "minor"), fix("nvcc-torch-cuda-mismatch", "minor", cuda=cuda)
    severity = Severity.WARN if major else Severity.INFO
    return [Finding(id="nvcc-torch-cuda-mismatch", severity=severity, title=title, evidence=evidence, why=said, fix=do, area=AREA)]


CHECKS = (check_nvcc,)
