"""Every finding id any command can report, one module per area. A new id:
a FindingDoc in its area's module (or a new module, named in AREAS), with the
sentence the code reports as its why in `says` (or `cases`), which the code
gets with `catalog.why(id)`, and the command it reports as its fix in `does`
(or `fix_cases`), got with `catalog.fix(id)`; then `python -m gpudoctor.docs`
writes its page."""

from __future__ import annotations

from gpudoctor.catalog.entry import FindingDoc
from gpudoctor.catalog.findings import (
    allreduce,
    backends,
    checkpoints,
    collectives,
    data,
    devices,
    diagnose,
    distributed,
    environment,
    fleet,
    gpudoctor,
    gpu_health,
    gpus,
    launch,
    links,
    nccl,
    performance,
    platform,
    ranks,
    stragglers,
    system,
    torch,
    verifications,
    visibility,
)

AREAS = (allreduce, backends, checkpoints, collectives, data, devices, diagnose, distributed, environment, fleet, gpudoctor, gpu_health, gpus, launch, links, nccl, performance, platform, ranks, stragglers, system, torch, verifications, visibility)

FINDINGS: dict[str, FindingDoc] = {e.id: e for area in AREAS for e in area.ENTRIES}

# Two entries with one id would hide one of them.
assert len(FINDINGS) == sum(len(area.ENTRIES) for area in AREAS), "a finding id is in the catalog twice"
