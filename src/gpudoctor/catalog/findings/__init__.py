"""Every finding id any command can report, one module per area. A new id: a
FindingKind in its area's module (or a new module, named in AREA_NAMES), with its
title, why and fix; the emitter calls it (`KIND(evidence=..., field=...)`); then
`python -m gpudoctor.docs` writes its page.

An emitter imports its area's module alone; AREAS and FINDINGS (every kind, for the
pages, `--list-checks` and the tests) load every area on first use, so that the CLI's
start (`--help`, `lint`) does not pay for two dozen modules of words it will not print."""

from __future__ import annotations

import importlib
from typing import Any

from gpudoctor.catalog.kind import FindingKind, kinds_in

AREA_NAMES = (
    "allreduce", "backends", "checkpoints", "collectives", "data", "devices", "diagnose", "distributed",
    "environment", "fleet", "gpudoctor", "gpu_health", "gpus", "launch", "links", "nccl", "performance",
    "platform", "ranks", "stragglers", "system", "torch", "verifications", "visibility",
)


def __getattr__(name: str) -> Any:
    """AREAS (the area modules) and FINDINGS ({id: kind}), loaded on first use."""
    if name == "AREAS":
        areas = tuple(importlib.import_module(f"{__name__}.{area}") for area in AREA_NAMES)
        globals()["AREAS"] = areas
        return areas
    if name == "FINDINGS":
        kinds = [k for area in __getattr__("AREAS") for k in kinds_in(vars(area))]
        findings: dict[str, FindingKind] = {k.id: k for k in kinds}
        # Two kinds with one id would hide one of them.
        assert len(findings) == len(kinds), "a finding id is in the catalog twice"
        globals()["FINDINGS"] = findings
        return findings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
