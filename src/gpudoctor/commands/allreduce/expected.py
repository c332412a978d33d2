"""What good looks like: the all-reduce bus bandwidth published nccl-tests runs
reached on a given GPU model, GPU count and link, so `allreduce` can say "38 % of
what 8x H100 over NVLink 4 reaches" instead of a bare number.

Each row is a measurement someone published (the NCCL maintainers' figure where
they gave one), with its source. A row applies only to a run with the same GPU
model, the same number of GPUs and the same kind of link: NCCL's algorithms and
the topology change with each, and a figure from another shape would mislead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

# Below this share of the published figure, at a size large enough to reach it,
# the run is not getting what the hardware gives.
LOW_SHARE = 0.5
# Published peaks are reached at 1 GiB and above; from this size on a low share is a verdict.
FULL_SIZE_BYTES = 512 << 20


@dataclass(frozen=True)
class Reference:
    model: str  # how the GPUs are named in the sentence: "H100 SXM"
    names: str  # regex on NVML's GPU name
    gpus: int
    link_kind: str  # "nvlink" or "pcie", as probe/links.py says
    link: str  # the link in words: "NVLink 4 (NVSwitch)"
    busbw_gbps: float  # all_reduce_perf busbw at its peak size
    source: str
    note: str = ""


REFERENCES = (
    Reference(
        "H100 SXM", r"H100(?! PCIe)(?! NVL)", 8, "nvlink", "NVLink 4 (NVSwitch)", 480.0,
        "https://github.com/NVIDIA/nccl-tests/issues/212",
        "NCCL maintainer: 'On 8 GPUs, you should reach a peak busBw of ~480GB/s' with NVLink SHARP "
        "(the default); ~370 GB/s with NCCL_ALGO=RING; reached at sizes above 256M",
    ),
    Reference(
        "H200", r"H200", 8, "nvlink", "NVLink 4 (NVSwitch)", 475.0,
        "https://github.com/NVIDIA/nccl-tests/issues/272",
        "8x H200, NCCL 2.20.3, all_reduce_perf -b 64k -e 4G: peak 475 GB/s",
    ),
    Reference(
        "H100 PCIe", r"H100 PCIe", 2, "nvlink", "an NVLink 4 bridge", 116.0,
        "https://github.com/NVIDIA/nccl-tests/issues/194",
        "2x H100 PCIe joined by an NVLink bridge, all_reduce_perf -b 1G -e 8G -g 2: 116 GB/s",
    ),
    Reference(
        "A100 SXM", r"A100-SXM", 8, "nvlink", "NVLink 3 (NVSwitch)", 200.0,
        "https://github.com/NVIDIA/nccl-tests/issues/149",
        "8x A100-SXM4-80GB (HPE Apollo 6500), NCCL 2.18.1, all_reduce_perf up to 1G: ~200 GB/s",
    ),
    Reference(
        "A100 SXM", r"A100-SXM", 2, "nvlink", "NVLink 3 (NV12)", 208.0,
        "https://github.com/NVIDIA/nccl-tests/issues/178",
        "two A100 SXM4 joined by 12 NVLinks (NV12), all_reduce_perf -b 8 -e 12G -t 2: 208 GB/s",
    ),
    Reference(
        "RTX 2080 Ti", r"2080 Ti", 2, "nvlink", "an NVLink 2 bridge", 21.5,
        "https://github.com/NVIDIA/nccl-tests/issues/44",
        "2x RTX 2080 Ti with an NVLink bridge: 21.4 GB/s at 64M",
    ),
    Reference(
        "RTX 5090", r"5090", 8, "pcie", "PCIe Gen5 (through the CPUs)", 28.0,
        "https://github.com/NVIDIA/nccl/issues/1639",
        "8x RTX 5090 on PCIe Gen5, all_reduce_perf -b 1g -e 8g: 28 GB/s, which the NCCL maintainer called "
        "already good for PCIe (bounded by CPU and memory bandwidth)",
    ),
    Reference(
        "RTX 5090", r"5090", 4, "pcie", "PCIe Gen5 (through the CPUs)", 35.0,
        "https://github.com/NVIDIA/nccl/issues/1639",
        "4x RTX 5090 on PCIe Gen5: 35 GB/s",
    ),
)


@dataclass(frozen=True)
class Expectation:
    reference: Reference
    measured_gbps: float

    @property
    def share(self) -> float:
        return self.measured_gbps / self.reference.busbw_gbps

    def sentence(self) -> str:
        r = self.reference
        return f"{100 * self.share:.0f} % of what {r.gpus}x {r.model} over {r.link} reaches ({r.busbw_gbps:g} GB/s)"


def reference_for(gpus: Sequence[str], link_kind: str) -> Reference | None:
    """The published run with these GPUs (NVML names, one per rank), this many, on this kind of link."""
    if not gpus:
        return None
    for ref in REFERENCES:
        if ref.gpus == len(gpus) and ref.link_kind == link_kind and all(re.search(ref.names, g) for g in gpus):
            return ref
    return None


def expectation(gpus: Sequence[str], link_kind: str, peak_gbps: float | None) -> Expectation | None:
    ref = reference_for(gpus, link_kind)
    if ref is None or peak_gbps is None:
        return None
    return Expectation(ref, peak_gbps)
