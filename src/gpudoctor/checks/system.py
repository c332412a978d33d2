"""The host limits that break DataLoader workers and ranks before any GPU
does: /dev/shm, the open-files limit, CPUs, memory."""

from __future__ import annotations

from gpudoctor.catalog.findings.system import (
    CONTAINER_DETECTED,
    CPU_COUNT,
    OPEN_FILES_LIMIT,
    OPEN_FILES_LIMIT_LOW,
    RAM_SIZE,
    SHM_SIZE,
    SHM_TOO_SMALL,
)
from gpudoctor.checks.wording import plural, shown, size
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.facts import Facts

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
        return [CPU_COUNT(case="affinity", severity=Severity.INFO, evidence=evidence, usable=usable, logical=s.cpus_logical)]
    logical = plural(s.cpus_logical, "logical CPU") if isinstance(s.cpus_logical, int) else shown(s.cpus_logical)
    return [CPU_COUNT(case="all", evidence=evidence, no_why=True, logical=logical, physical=shown(s.cpus_physical))]


def check_ram(facts: Facts) -> list[Finding]:
    s = facts.system
    if not isinstance(s.ram_total_bytes, int):
        return []  # not read: no "ok" line about a memory nobody measured
    total, available = size(s.ram_total_bytes), size(s.ram_available_bytes)
    return [RAM_SIZE(evidence={"total": total, "available": available}, total=total, available=available)]


def check_shm(facts: Facts) -> list[Finding]:
    total = facts.system.shm_total_bytes
    evidence = {"/dev/shm size": size(total), "/dev/shm free": size(facts.system.shm_free_bytes),
                "container": list(facts.system.container) or "no"}
    if not isinstance(total, int):
        return []
    if total < SHM_MIN_BYTES:
        return [SHM_TOO_SMALL(case="small", evidence=evidence, size=size(total))]
    free = facts.system.shm_free_bytes
    # Large enough, but mostly held by files left there: less than the floor free and more
    # than half in use (a /dev/shm at the floor always has a little in use: not "full").
    if isinstance(free, int) and free < SHM_MIN_BYTES and total - free > total // 2:
        return [SHM_TOO_SMALL(case="full", evidence=evidence, size=size(total), free=size(free))]
    return [SHM_SIZE(evidence=evidence, size=size(total))]


def check_open_files(facts: Facts) -> list[Finding]:
    soft, hard = facts.system.open_files_soft, facts.system.open_files_hard
    if not isinstance(soft, int):
        return []
    evidence = {"soft limit": "unlimited" if soft == -1 else soft, "hard limit": "unlimited" if hard == -1 else shown(hard)}
    if soft == -1 or soft >= OPEN_FILES_MIN:
        return [OPEN_FILES_LIMIT(evidence=evidence, soft=evidence["soft limit"])]
    # raise the soft limit as far as the hard one allows, to at most 65536
    target = min(hard, 65536) if isinstance(hard, int) and hard != -1 else 65536
    # a hard limit too low to raise the soft one to enough: share tensors through files instead
    fix_case = "raise" if target >= OPEN_FILES_MIN else "share-files"
    return [OPEN_FILES_LIMIT_LOW(fix_case=fix_case, evidence=evidence, soft=soft, target=target)]


def check_container(facts: Facts) -> list[Finding]:
    hints = facts.system.container
    if not hints:
        return []
    return [CONTAINER_DETECTED(evidence={"hints": list(hints)})]


CHECKS = (check_cpus, check_ram, check_shm, check_open_files, check_container)
