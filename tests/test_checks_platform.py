"""Windows and macOS, simulated where the checks decide on the OS: the
`system.platform` fact. The snapshots are the recorded Linux ones with the facts
the probe gathers differently there (no /dev/shm, no resource module, no lspci,
no NCCL in torch's Windows and macOS wheels)."""

from __future__ import annotations

import pytest

from facts_cases import by_id, cpu_facts, gpu2_facts, ids, vary
from gpudoctor.checks import run_checks
from gpudoctor.checks.platform import LINUX, MACOS, OTHER, WINDOWS, check_platform, os_family
from gpudoctor.core.findings import Severity
from gpudoctor.core.unavailable import Unavailable

WINDOWS_PLATFORM = "Windows-11-10.0.22631-SP0"
MACOS_PLATFORM = "macOS-14.5-arm64-arm-64bit"


def as_probed_on(facts, platform: str):
    facts = vary(facts, "system.platform", platform)
    for field in ("shm_total_bytes", "shm_free_bytes"):
        facts = vary(facts, f"system.{field}", Unavailable("no /dev/shm on win32"))
    for field in ("open_files_soft", "open_files_hard"):
        facts = vary(facts, f"system.{field}", Unavailable("no resource module on this OS"))
    facts = vary(facts, "system.display_devices", Unavailable("no lspci and no /sys/bus/pci on this system"))
    facts = vary(facts, "system.container", ())
    return vary(facts, "torch.backends", {**facts.torch.backends, "nccl": False})


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Linux-6.18.44-fc-v509-x86_64-with-glibc2.36", LINUX),
        (WINDOWS_PLATFORM, WINDOWS),
        (MACOS_PLATFORM, MACOS),
        ("Darwin-19.6.0-x86_64-i386-64bit", MACOS),
        ("FreeBSD-14.0-RELEASE-amd64-64bit-ELF", OTHER),
    ],
)
def test_os_family(text, expected):
    assert os_family(text) == expected


def test_linux_has_nothing_to_say():
    assert check_platform(cpu_facts()) == []
    assert "platform-limits" not in ids(run_checks(cpu_facts()))


def test_windows_with_gpus_runs_every_check_and_nccl_is_expected_missing():
    findings = run_checks(as_probed_on(gpu2_facts(), WINDOWS_PLATFORM))
    assert "check-failed" not in ids(findings)
    assert [f for f in findings if f.severity is Severity.ERROR] == []
    limits = by_id(findings, "platform-limits")
    assert limits.severity is Severity.INFO and "NCCL backend" in limits.evidence["does not apply"]
    assert limits.fix.startswith("wsl --install")
    nccl = by_id(findings, "nccl-missing")
    assert nccl.severity is Severity.INFO and "gloo" in nccl.fix
    assert "shm-too-small" not in ids(findings) and "open-files-limit-low" not in ids(findings)


def test_nccl_missing_on_linux_with_gpus_stays_an_error():
    linux = vary(gpu2_facts(), "torch.backends", {**gpu2_facts().torch.backends, "nccl": False})
    assert by_id(run_checks(linux), "nccl-missing").severity is Severity.ERROR


def test_macos_says_nvml_and_cuda_do_not_apply_instead_of_a_missing_driver():
    findings = run_checks(as_probed_on(cpu_facts(), MACOS_PLATFORM))
    assert "check-failed" not in ids(findings)
    limits = by_id(findings, "platform-limits")
    assert "NVIDIA driver and NVML" in limits.evidence["does not apply"] and "mps" in limits.fix
    assert "no-nvidia-gpu" not in ids(findings) and "nvidia-driver-missing" not in ids(findings)
    assert [f for f in findings if f.severity is Severity.ERROR] == []
