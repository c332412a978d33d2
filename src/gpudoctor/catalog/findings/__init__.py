"""Every finding id any command can report, one module per area. A new id: a
FindingKind in its area's module (or a new module, named in AREAS), with its
title, why and fix; the emitter calls it (`KIND(evidence=..., field=...)`); then
`python -m gpudoctor.docs` writes its page."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind, kinds_in
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

FINDINGS: dict[str, FindingKind] = {k.id: k for area in AREAS for k in kinds_in(vars(area))}

# Two kinds with one id would hide one of them.
assert len(FINDINGS) == sum(len(kinds_in(vars(area))) for area in AREAS), "a finding id is in the catalog twice"
