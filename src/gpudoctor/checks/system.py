"""The host limits that break DataLoader workers and ranks before any GPU
does: /dev/shm, the open-files limit, CPUs, memory."""

from __future__ import annotations

from gpudoctor.checks.wording import plural, shown, size
from gpudoctor.core.findings import Finding, Severity, ok
from gpudoctor.probe.facts import Facts
from gpudoctor.catalog import fix, why

AREA = "system"
# The one /dev/shm floor, for `check` (shm-too-small) and for `allreduce` before an
# NCCL run (allreduce-shm). DataLoader workers hand batches over through /dev/shm and
# NCCL's SHM transport between local ranks keeps its buffers there; Docker's default
# 64 MiB is gone after a few image batches ("Bus error", "No space left on device").
# 1 GiB leaves room for both: a few workers' prefetched batches plus NCCL's buffers
# for 8 local ranks (a few MiB per pair and channel).
SHM_MIN_BYTES = 1 << 30
# Each worker-to-main tensor handed over with the default file_descriptor
# strategy holds a descriptor; a few workers with prefetching exceed 1024.
OPEN_FILES_MIN = 4096


def check_cpus(facts: Facts) -> list[Finding]:
    s = facts.system
    evidence = {
        "logical": shown(s.cpus_logical),
        "physical": shown(s.cpus_physical),
        "usable (affinity)": len(s.cpu_affinity) if isinstance(s.cpu_affinity, tuple) else shown(s.cpu_affinity),
        "OMP_NUM_THREADS": facts.environment.get("OMP_NUM_THREADS"),
    }
    usable = len(s.cpu_affinity) if isinstance(s.cpu_affinity, tuple) else None
    if usable is not None and isinstance(s.cpus_logical, int) and usable < s.cpus_logical:
        return [
            Finding(
                id="cpu-count",
                severity=Severity.INFO,
                title=f"This process may use {usable} of {s.cpus_logical} logical CPUs (CPU affinity is restricted)",
                evidence=evidence,
                why=why("cpu-count"),
                area=AREA,
            )
        ]
    return [ok("cpu-count", f"{plural(s.cpus_logical, 'logical CPU') if isinstance(s.cpus_logical, int) else shown(s.cpus_logical)} "
               f"({shown(s.cpus_physical)} physical)", AREA, **evidence)]


def check_ram(facts: Facts) -> list[Finding]:
    s = facts.system
    return [ok("ram-size", f"{size(s.ram_total_bytes)} RAM, {size(s.ram_available_bytes)} available", AREA,
               total=size(s.ram_total_bytes), available=size(s.ram_available_bytes))]


def check_shm(facts: Facts) -> list[Finding]:
    total = facts.system.shm_total_bytes
    evidence = {"/dev/shm size": size(total), "/dev/shm free": size(facts.system.shm_free_bytes),
                "container": list(facts.system.container) or "no"}
    if not isinstance(total, int):
        return []
    if total >= SHM_MIN_BYTES:
        return [ok("shm-size", f"/dev/shm is {size(total)}", AREA, **evidence)]
    return [
        Finding(
            id="shm-too-small",
            severity=Severity.WARN,
            title=f"/dev/shm is only {size(total)}: DataLoader workers will run out of shared memory",
            evidence=evidence,
            why=why("shm-too-small"),
            fix=fix("shm-too-small"),
            area=AREA,
        )
    ]


def check_open_files(facts: Facts) -> list[Finding]:
    soft, hard = facts.system.open_files_soft, facts.system.open_files_hard
    if not isinstance(soft, int):
        return []
    evidence = {"soft limit": "unlimited" if soft == -1 else soft, "hard limit": "unlimited" if hard == -1 else shown(hard)}
    if soft == -1 or soft >= OPEN_FILES_MIN:
        return [ok("open-files-limit", f"Open-files limit is {evidence['soft limit']}", AREA, **evidence)]
    # raise the soft limit as far as the hard one allows, to at most 65536
    target = min(hard, 65536) if isinstance(hard, int) and hard != -1 else 65536
    raise_it = target >= OPEN_FILES_MIN
    return [
        Finding(
            id="open-files-limit-low",
            severity=Severity.WARN,
            title=f"Open-files limit is {soft}: DataLoader workers may fail with 'Too many open files'",
            evidence=evidence,
            why=why("open-files-limit-low"),
            fix=fix("open-files-limit-low", "raise", target=target) if raise_it else fix("open-files-limit-low", "share-files"),
            area=AREA,
        )
    ]


def check_container(facts: Facts) -> list[Finding]:
    hints = facts.system.container
    if not hints:
        return []
    return [
        Finding(
            id="container-detected",
            severity=Severity.INFO,
            title="Running in a container: GPUs, /dev/shm and network are what the container was given",
            evidence={"hints": list(hints)},
            area=AREA,
        )
    ]


CHECKS = (check_cpus, check_ram, check_shm, check_open_files, check_container)
