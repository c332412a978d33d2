"""The operating system: what applies where. gpudoctor is built around Linux
(NCCL, /dev/shm, ulimit, lspci); on Windows and macOS some checks do not apply,
and this says which, instead of leaving them silently out.

The decision is made from the `system.platform` fact (platform.platform() of the
machine probed), so a snapshot read with `check --facts` is judged by the OS it
was taken on, and tests simulate an OS by varying that one fact."""

from __future__ import annotations

from gpudoctor.catalog import fix, why
from gpudoctor.core.findings import Finding, Severity
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


# What does not apply (what PyTorch does there, and what to do instead: the
# "platform-limits" entry's cases).
NOT_APPLICABLE = {
    WINDOWS: (
        "Windows: NCCL is not built for Windows (GPU collectives run on gloo), and /dev/shm and "
        "the open-files limit do not exist",
        ["NCCL backend", "/dev/shm size", "open-files limit (ulimit -n)", "PCI listing (lspci, /sys/bus/pci)"],
    ),
    MACOS: (
        "macOS: no CUDA and no NVIDIA driver; torch runs on MPS (Apple GPU) or CPU, and "
        "distributed training on gloo",
        ["NVIDIA driver and NVML", "CUDA devices and CUDA_VISIBLE_DEVICES", "NCCL backend",
         "/dev/shm size", "PCI listing (lspci, /sys/bus/pci)"],
    ),
    OTHER: (
        "An operating system gpudoctor is not built for: some checks may not apply",
        ["NCCL backend", "/dev/shm size", "PCI listing (lspci, /sys/bus/pci)"],
    ),
}


def check_platform(facts: Facts) -> list[Finding]:
    os_name = family(facts)
    if os_name == LINUX:
        return []
    title, skipped = NOT_APPLICABLE[os_name]
    if os_name == WINDOWS:
        reason, instead = why("platform-limits", "windows"), fix("platform-limits", "windows")
    elif os_name == MACOS:
        reason, instead = why("platform-limits", "macos"), fix("platform-limits", "macos")
    else:
        reason, instead = why("platform-limits", "other"), ""
    return [
        Finding(
            id="platform-limits",
            severity=Severity.INFO,
            title=title,
            evidence={"platform": facts.system.platform, "does not apply": skipped},
            why=reason,
            fix=instead,
            area=AREA,
        )
    ]


CHECKS = (check_platform,)
