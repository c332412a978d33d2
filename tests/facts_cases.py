"""Facts for check tests: the real snapshot of the CPU machine, the 2-GPU
snapshot built from it (see fixtures/README.md), and a way to vary one field."""

from __future__ import annotations

import dataclasses
import re
from functools import cache
from pathlib import Path
from typing import Any

from gpudoctor.core.findings import Finding
from gpudoctor.probe.facts import Facts, load

FIXTURES = Path(__file__).parent / "fixtures"
CPU_SNAPSHOT = FIXTURES / "facts_cpu.json"
GPU2_SNAPSHOT = FIXTURES / "facts_2gpu.json"


@cache
def cpu_facts() -> Facts:
    return load(CPU_SNAPSHOT)


@cache
def gpu2_facts() -> Facts:
    return load(GPU2_SNAPSHOT)


def vary(obj: Any, path: str, value: Any) -> Any:
    """A copy of `obj` with the field at `path` replaced:
    vary(facts, "nvml.gpus[1].mig_mode", "enabled")."""
    head, _, rest = path.partition(".")
    m = re.fullmatch(r"(\w+)(?:\[(\d+)\])?", head)
    assert m, f"bad path {path!r}"
    name, index = m.group(1), m.group(2)
    current = getattr(obj, name)
    if index is None:
        new = vary(current, rest, value) if rest else value
    else:
        items = list(current)
        i = int(index)
        items[i] = vary(items[i], rest, value) if rest else value
        new = tuple(items)
    return dataclasses.replace(obj, **{name: new})


def with_env(facts: Facts, **variables: str | None) -> Facts:
    """Set (or, with None, remove) environment variables in the facts."""
    env = dict(facts.environment.variables)
    for k, v in variables.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return vary(facts, "environment.variables", env)


def by_id(findings: list[Finding] | tuple[Finding, ...], id: str) -> Finding:
    hits = [f for f in findings if f.id == id]
    assert len(hits) == 1, f"expected one {id!r}, got {[f.id for f in findings]}"
    return hits[0]


def ids(findings) -> list[str]:
    return [f.id for f in findings]


def torch_sees(facts: Facts, physical: list[int]) -> Facts:
    """torch facts as a fresh process would report them if CUDA exposed these
    physical GPUs (NVML indices), in this order, as cuda:0, cuda:1, ..."""
    template = facts.torch.devices[0]
    devices = []
    for i, p in enumerate(physical):
        gpu = facts.nvml.gpus[p]
        devices.append(
            dataclasses.replace(
                template,
                index=i,
                name=gpu.name,
                uuid=gpu.uuid.removeprefix("GPU-"),
                pci_bus_id=gpu.pci_bus_id.lower()[4:],
            )
        )
    facts = vary(facts, "torch.devices", tuple(devices))
    return vary(facts, "torch.device_count", len(devices))


def visible(facts: Facts, value: str | None, physical: list[int]) -> Facts:
    """CUDA_VISIBLE_DEVICES=value in the environment, and torch seeing `physical`."""
    facts = with_env(facts, CUDA_VISIBLE_DEVICES=value)
    facts = vary(facts, "torch.cuda_visible_devices", value)
    return torch_sees(facts, physical)
