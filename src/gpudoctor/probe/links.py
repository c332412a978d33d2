"""How the GPUs of a multi-rank run reach each other (NVLink, PCIe, hosts),
from NVML, and the NCCL_* variables the run was given. Never raises: what NVML
cannot say becomes kind "unknown" with a reason."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpudoctor.probe.nvml import GpuHealth, probe_nvml


@dataclass(frozen=True)
class RankPlace:
    """Where one rank of a run ran: its host and, on a GPU, the GPU's name and
    PCI bus id in NVML's form (None off GPU, or where torch does not expose it)."""

    rank: int
    host: str
    local_rank: int
    gpu: str | None = None
    pci_bus_id: str | None = None


@dataclass(frozen=True)
class LinkFacts:
    """How the GPUs of the run reach each other, from NVML (probed after the run)."""

    gpus: tuple[str, ...]  # names, by rank
    hosts: int  # distinct hosts the ranks ran on
    kind: str  # "nvlink" (every pair), "pcie" (no pair), "mixed", or "unknown"
    nvlinks_min: int | None  # fewest NVLinks between any two GPUs of the run
    topology: tuple[str, ...] = ()  # nvidia-smi topo names of the pairs (PIX, PHB, SYS, ...)
    p2p: tuple[str, ...] = ()  # NVML's P2P read status of the pairs ("ok" or why not)
    reason: str = ""  # why kind is unknown
    env: dict = field(default_factory=dict)  # NCCL_* variables set for the run
    # Each GPU's PCIe link, "gen4 x16", or "gen3 x8 of gen4 x16" when below its maximum (NVML)
    pcie: tuple[str, ...] = ()



def nccl_env() -> dict[str, str]:
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("NCCL_")}


def link_facts(devices: Sequence[RankPlace] | None) -> LinkFacts | None:
    """The link between the run's GPUs from NVML (the `check` command's probe),
    or None off GPU. Fail-soft: anything NVML cannot say becomes kind "unknown"."""
    gpu_devices = [d for d in devices or () if d.pci_bus_id]
    if len(gpu_devices) < 2:
        return None
    hosts = len({d.host for d in gpu_devices})
    names = tuple(d.gpu or "?" for d in gpu_devices)
    env = nccl_env()
    if hosts > 1:
        return LinkFacts(names, hosts, "unknown", None, reason="ranks on several hosts", env=env)
    facts = probe_nvml()  # probes never raise; a wedged driver is a reason, not a hang
    if not facts.available:
        return LinkFacts(names, 1, "unknown", None, reason=f"NVML unavailable: {facts.error}", env=env)
    by_bus = {}
    for gpu in facts.gpus:
        if isinstance(gpu.pci_bus_id, str):
            by_bus[gpu.pci_bus_id.lower()] = gpu.index
    ours = sorted({i for d in gpu_devices if d.pci_bus_id and (i := by_bus.get(d.pci_bus_id.lower())) is not None})
    if len(ours) < 2:
        return LinkFacts(names, 1, "unknown", None, reason="could not match the ranks' GPUs in NVML", env=env)
    pairs = [link for link in facts.links if link.a in ours and link.b in ours]
    counts = [link.nvlinks for link in pairs if isinstance(link.nvlinks, int)]
    if not pairs or len(counts) < len(pairs):
        return LinkFacts(names, 1, "unknown", None, reason="NVML gave no NVLink state", env=env)
    kind = "nvlink" if all(counts) else "pcie" if not any(counts) else "mixed"
    return LinkFacts(
        gpus=names,
        hosts=1,
        kind=kind,
        nvlinks_min=min(counts),
        topology=tuple(sorted({str(link.topology) for link in pairs})),
        p2p=tuple(sorted({str(link.p2p_read) for link in pairs})),
        env=env,
        pcie=tuple(_pcie(g.health) for g in facts.gpus if g.index in ours),
    )


def _pcie(health: object) -> str:
    """Generation and width now; the width it could have when it trained narrower
    (the generation drops at idle, and this is read after the run, so it is not compared)."""
    if not isinstance(health, GpuHealth) or not isinstance(health.pcie_gen, int) or not isinstance(health.pcie_width, int):
        return "?"
    top = health.pcie_max_width
    narrow = f" (of x{top})" if isinstance(top, int) and top > health.pcie_width else ""
    return f"gen{health.pcie_gen} x{health.pcie_width}{narrow}"
