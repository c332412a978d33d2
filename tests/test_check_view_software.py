"""check --markdown (and so `report`) carries the collect_env fields: packages, OS and
kernel, CPU, gcc/glibc, nvcc; an older snapshot without them says so in one line."""

import dataclasses

from facts_cases import cpu_facts
from gpudoctor.commands.check.view import markdown_sections
from gpudoctor.probe.software import Nvcc, Package, SoftwareFacts


def test_markdown_has_the_bug_report_fields():
    software = SoftwareFacts(
        (Package("nvidia-nccl-cu12", "2.27.5", "nvidia wheel"), Package("torch", "2.13.0+cpu", "listed")),
        "Ubuntu 24.04.1 LTS", "6.8.0-45-generic", "Intel(R) Xeon(R) Platinum 8480+", "13.2.0", "2.39",
        Nvcc("/usr/local/cuda/bin/nvcc", "/usr/local/cuda", "12.4"),
    )  # fmt: skip
    versions, packages, *_ = markdown_sections(dataclasses.replace(cpu_facts(), software=software))
    assert "| OS / kernel | Ubuntu 24.04.1 LTS / 6.8.0-45-generic |" in versions
    assert "| CPU | Intel(R) Xeon(R) Platinum 8480+ |" in versions and "| gcc / glibc | 13.2.0 / 2.39 |" in versions
    assert "12.4 (/usr/local/cuda/bin/nvcc, by /usr/local/cuda)" in versions
    assert "| nvidia-nccl-cu12 | 2.27.5 | nvidia wheel |" in packages


def test_an_older_snapshot_says_what_it_lacks():
    versions, packages, *_ = markdown_sections(cpu_facts())
    assert "not in this snapshot" in versions and "not in this snapshot" in packages
