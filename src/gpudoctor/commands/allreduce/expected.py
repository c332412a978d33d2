"""What good looks like: the all-reduce bus bandwidth a published nccl-tests run reached
on a given GPU model, GPU count and link, so `allreduce` can say "90 % of what 8x H100
over NVLink 4 reaches" instead of a bare number.

Each row is a figure that its source states as a good result (an NCCL maintainer's figure,
or a run the maintainer called good), with the conditions it holds under. A row applies
only to a run with the same GPU model, the same number of GPUs and the same kind of link:
NCCL's algorithms and the topology change with each, and a figure from another shape
would mislead, so another shape gets "no published figure for this shape".

The statistic is nccl-tests' busbw: each rank times its whole loop of iterations and
divides by their number (the mean time), and the ranks' times are averaged (nccl-tests'
default `-a 1`); busbw = size / time x 2(n-1)/n. `allreduce` compares its own run's figure
computed the same way (`bandwidth.mean_time_us`), not its table's median.
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


# What every figure below is: nccl-tests' all_reduce_perf busbw, out-of-place, at the peak size.
STATISTIC = "nccl-tests busbw: the timed loop's mean time, averaged over the ranks"


@dataclass(frozen=True)
class Reference:
    model: str  # how the GPUs are named in the sentence: "H100 SXM"
    names: str  # regex on NVML's GPU name
    gpus: int
    link_kind: str  # "nvlink" or "pcie", as probe/links.py says
    link: str  # the link in words: "NVLink 4 (NVSwitch)"
    busbw_gbps: float  # all_reduce_perf busbw at its peak size
    source: str
    note: str  # who states it as a good result, in which words
    conditions: str  # GPUs, links, NCCL version, message size, as the source gives them


# NVML names: "NVIDIA H100 80GB HBM3" (SXM), "NVIDIA H100 PCIe", "NVIDIA H100 NVL" (PCIe with
# bridges), "NVIDIA H200" (SXM), "NVIDIA H200 NVL", "NVIDIA GH200 480GB" (Grace Hopper): only the
# SXM parts sit on an NVSwitch board, and "GH200" is not an H200.
H100_SXM = r"(?<![A-Z])H100(?! PCIe)(?! NVL)"
H200_SXM = r"(?<![A-Z])H200(?! NVL)"
NVLINK4_TARGET = (
    "NCCL maintainer (nccl#1442): 'The app-level bandwidth is 370GB/s in each direction, which is the real "
    "target for NCCL BusBW intra-node, except for the Allreduce operation where we can get a 30% improvement "
    "using NVLink SHARP'; 8x H100 SXM measured 365-370 GB/s busbw on 2 to 4 GPUs with NVLS (nccl#1455)"
)
NVLINK4_CONDITIONS = "H100 SXM on an NVSwitch board (NVLink 4, 18 links per GPU); all_reduce_perf -b 2G -e 4G -g {n}"

REFERENCES = (
    Reference(
        "H100 SXM", H100_SXM, 8, "nvlink", "NVLink 4 (NVSwitch)", 480.0,
        "https://github.com/NVIDIA/nccl-tests/issues/212",
        "NCCL maintainer: 'On 8 GPUs, you should reach a peak busBw of ~480GB/s (algbw ~275GB/s)' with NVLink "
        "SHARP, which all-reduce uses by default; ~370 GB/s with NCCL_ALGO=RING",
        "8x H100 SXM, NVSwitch with NVLink SHARP; NCCL version not stated; sizes above 256M (256M is too small for the peak)",
    ),
    *(
        Reference(
            "H100 SXM", H100_SXM, n, "nvlink", "NVLink 4 (NVSwitch)", 370.0,
            "https://github.com/NVIDIA/nccl/issues/1442", NVLINK4_TARGET, NVLINK4_CONDITIONS.format(n=n),
        )
        for n in (2, 4)
    ),
    Reference(
        "H200", H200_SXM, 8, "nvlink", "NVLink 4 (NVSwitch)", 475.0,
        "https://github.com/NVIDIA/nccl-tests/issues/272",
        "8x H200 measured 475 GB/s, the figure the NCCL maintainer gives for the same NVLink 4 NVSwitch board "
        "with H100 (~480 GB/s, nccl-tests#212)",
        "8x H200, NVLink 4 NVSwitch, NCCL 2.20.3, one process per GPU, all_reduce_perf -b 64k -e 4G",
    ),
    *(
        Reference(
            "H200", H200_SXM, n, "nvlink", "NVLink 4 (NVSwitch)", 370.0,
            "https://github.com/NVIDIA/nccl/issues/1442",
            NVLINK4_TARGET + "; the H200 has the H100's NVLink 4 and NVSwitch board",
            NVLINK4_CONDITIONS.format(n=n).replace("H100 SXM", "H200"),
        )
        for n in (2, 4)
    ),
    Reference(
        "RTX 5090", r"5090", 8, "pcie", "PCIe Gen5 (through the CPUs)", 28.0,
        "https://github.com/NVIDIA/nccl/issues/1639",
        "NCCL maintainer: 'I'm actually impressed that you can achieve 28GB/s with 8 GPUs. On PCI systems, the "
        "performance you get is usually determined by the bandwidth your CPU and memory can deliver'",
        "8x RTX 5090 on PCIe Gen5, two Xeon 8480+, driver 570.124.04, CUDA 12.8, "
        "NCCL_NTHREADS=256 NCCL_MIN_NCHANNELS=8 all_reduce_perf -b 1g -e 8g -g 8",
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
        return (f"{100 * self.share:.0f} % of what {r.gpus}x {r.model} over {r.link} reaches "
                f"({r.busbw_gbps:g} GB/s, nccl-tests' mean-time busbw)")


def reference_for(gpus: Sequence[str], link_kind: str) -> Reference | None:
    """The published run with these GPUs (NVML names, one per rank), this many, on this kind of
    link; None: no published figure for this shape."""
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
