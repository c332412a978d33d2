"""Controls and siblings for the verdicts of the users branch (issue 37): the healthy
input that looks most like the failure must not get the verdict (control); the
nearest input that needs another verdict gets its own (sibling)."""

from __future__ import annotations

import dataclasses

from facts_cases import cpu_facts, gpu2_facts, ids
from gpudoctor.checks.toolchain import check_nvcc
from gpudoctor.core.findings import Severity
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.software import Nvcc, SoftwareFacts

MISMATCH = "nvcc-torch-cuda-mismatch"


def with_nvcc(facts: Facts, release: str | None, found_by: str = "PATH") -> Facts:
    nvcc = None if release is None else Nvcc(f"/usr/local/cuda-{release}/bin/nvcc", found_by, release)
    software = SoftwareFacts((), "Debian GNU/Linux 12 (bookworm)", "6.1.0", "AMD EPYC", "12.2.0", "2.36", nvcc)
    return dataclasses.replace(facts, software=software)


class TestNvccTorchCudaMismatch:
    def test_control_same_minor_version_other_patch(self):
        # torch built with CUDA 12.6, nvcc "release 12.6, V12.6.85": the same toolkit.
        found = check_nvcc(with_nvcc(gpu2_facts(), "12.6"))
        assert ids(found) == ["nvcc-torch-cuda-match"] and found[0].severity is Severity.OK

    def test_control_cpu_torch_beside_an_nvcc(self):
        # This machine: nvcc 13.0 on PATH, a CPU torch: no CUDA extension is built against it.
        assert check_nvcc(with_nvcc(cpu_facts(), "13.0")) == []

    def test_control_no_nvcc(self):
        assert check_nvcc(with_nvcc(gpu2_facts(), None)) == []

    def test_control_snapshot_without_software_facts(self):
        assert check_nvcc(gpu2_facts()) == []  # taken before the probe existed: nothing claimed

    def test_sibling_major_version_differs_is_a_warning(self):
        [f] = check_nvcc(with_nvcc(gpu2_facts(), "13.0"))
        assert (f.id, f.severity) == (MISMATCH, Severity.WARN)
        assert "will not build" in f.title and "cuda-12.6" in f.fix
        assert f.evidence["nvcc release"] == "13.0" and f.evidence["torch CUDA (build)"] == "12.6"

    def test_sibling_minor_version_differs_is_info(self):
        [f] = check_nvcc(with_nvcc(gpu2_facts(), "12.4", found_by="CUDA_HOME"))
        assert (f.id, f.severity) == (MISMATCH, Severity.INFO)
        assert "by CUDA_HOME" in f.title and "only if an extension build fails" in f.fix
