"""The operating system: what applies where. gpudoctor is built around Linux
(NCCL, /dev/shm, ulimit, lspci); on Windows and macOS some checks do not apply,
and this says which, instead of leaving them silently out.

The decision is made from the `system.platform` fact (platform.platform() of the
machine probed), so a snapshot read with `check --facts` is judged by the OS it
was taken on, and tests simulate an OS by varying that one fact."""

from __future__ import annotations

from gpudoctor.catalog.findings.platform import PLATFORM_LIMITS
from gpudoctor.core.findings import Finding
from gpudoctor.probe.facts import Facts

AREA = "platform"
LINUX, WINDOWS, MACOS, OTHER = "linux", "windows", "macos", "other"


def os_family(platform: str) -> str:
    """platform.platform() text ("Linux-6.1-x86_64-with-glibc2.36", "Windows-11-10.0.22631-SP0",
    "macOS-14.5-arm64-arm-64bit", "Darwin-..." on old Pythons) -> one of the names above."""
    head = platform.split("-", 1)[0].lower()
    if head == "linux":
        return LINUX
    if head == "windows":
        return WINDOWS
    if head in ("macos", "darwin"):
        return MACOS
    return OTHER


def family(facts: Facts) -> str:
    return os_family(facts.system.platform)


# What does not apply on each OS (the title says why: the "platform-limits" kind's cases).
NOT_APPLICABLE = {
    WINDOWS: ["NCCL backend", "/dev/shm size", "open-files limit (ulimit -n)", "PCI listing (lspci, /sys/bus/pci)"],
    MACOS: ["NVIDIA driver and NVML", "CUDA devices and CUDA_VISIBLE_DEVICES", "NCCL backend",
            "/dev/shm size", "PCI listing (lspci, /sys/bus/pci)"],
    OTHER: ["NCCL backend", "/dev/shm size", "PCI listing (lspci, /sys/bus/pci)"],
}


def check_platform(facts: Facts) -> list[Finding]:
    os_name = family(facts)
    if os_name == LINUX:
        return []
    evidence = {"platform": facts.system.platform, "does not apply": NOT_APPLICABLE[os_name]}
    return [PLATFORM_LIMITS(case=os_name, evidence=evidence)]  # another OS has no fix: no one command to run instead


CHECKS = (check_platform,)
