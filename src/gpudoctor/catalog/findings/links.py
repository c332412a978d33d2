"""Findings in the area "links"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "links"
EMITTED_BY = "[`gpudoctor allreduce`](../commands/allreduce.md)"


ALLREDUCE_LINK_SPEED = FindingKind(
    id="allreduce-link-speed",
    title={
        "hosts": "ranks span {hosts} hosts: busbw {peak:.1f} GB/s is bounded by the network between them",
        "no-verdict": "no verdict on the GPU link speed{reason}",
        "latency-bound": "largest size {largest} is latency-bound: sweep to 64M or more for a link verdict",
        "nvlink-slow": "busbw {peak:.1f} GB/s between GPUs joined by NVLink ({nvlinks} links): {hint}",
        "nvlink-ok": "busbw {peak:.1f} GB/s fits GPUs joined by {nvlinks} NVLinks (>= {floor:.0f} GB/s)",
        "pcie-slow": "busbw {peak:.1f} GB/s between GPUs on PCIe ({topology}): slower than PCIe should give; {hint}",
        "pcie-ok": "busbw {peak:.1f} GB/s is what GPUs on PCIe ({topology}) give",
        "below-published": "busbw {measured:.1f} GB/s is {published}",
    },
    severity=Severity.OK,
    also=(Severity.WARN, Severity.INFO,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""On GPUs, the peak busbw compared with what the link between the GPUs should give, from
NVML: NVLink (about 25 GB/s per link and direction) or PCIe (several GB/s even through the
host bridge). A warning such as *"busbw 9.0 GB/s between GPUs joined by NVLink (12 links):
P2P is off or blocked?"* means NCCL is not using the fast path. Info, with no verdict, when
the largest size is under 32M (latency-bound), the ranks span several hosts (the network
bounds busbw), or NVML could not say how the GPUs are linked.

When a published nccl-tests figure, stated as a good result by its source, exists for the same
GPU model, the same number of GPUs and the same kind of link (`gpudoctor.commands.allreduce.expected`:
2x, 4x and 8x H100 SXM and H200 over NVLink 4 with NVSwitch, 8x RTX 5090 over PCIe Gen5), the
title adds the share of it, with this run's busbw computed as nccl-tests computes it (the mean
time of the loop, averaged over the ranks, not the table's median):
*"busbw 180.0 GB/s is 38 % of what 8x H100 SXM over NVLink 4 (NVSwitch) reaches (480 GB/s,
nccl-tests' mean-time busbw)"*; under half of it, with the largest size 512M or more, is a
warning that lists the link facts that may explain it (NVLinks, P2P, topology, `NCCL_*`
variables, a PCIe link trained narrow). Another shape gets no share: its evidence says *no
published figure for this shape*.""",
    evidence="""`peak busbw GB/s`, `link` (`nvlink`, `pcie`, `mixed`, `unknown`), `NVLinks between GPUs`
(the fewest between any pair), `topology` (PIX, PXB, PHB, NODE, SYS), `P2P` (NVML's P2P
read status), `GPUs`, the `NCCL_*` variables set, and `expected at least GB/s` on a
warning. With a published figure: `published busbw GB/s`, `share of published`, `busbw compared
(GB/s)` (this run's, the nccl-tests way), `statistic`, `published run` (who states it as good, in
which words), `conditions` (GPUs, links, NCCL version, sizes), `source` (the thread), and `PCIe
links` (each GPU's generation and width, `(of x16)` when trained narrower). Without one:
`published busbw` (*no published figure for this shape*).""",
    why={
        "below-published": "The same GPUs on the same kind of link reached this figure in a published nccl-tests run. Less than half of it at full size means a slower path: {facts}. NCCL variables that switch algorithms or transports off, NVLinks down (gpudoctor check: gpu-nvlink-degraded), a PCIe link trained narrow (gpu-pcie-link-degraded) or clocks held down (gpu-clocks-slowdown) each cost bandwidth.",
        "pcie-slow": "Even through the CPU's host bridge, PCIe Gen3 moves several GB/s; less points at ACS/IOMMU redirecting peer traffic, a link trained down (x1/x4, Gen1), or traffic crossing sockets.",
        "nvlink-slow": "With working NVLink, NCCL moves data GPU to GPU over it; a busbw at PCIe or host-memory speed means NCCL is not using the links (P2P disabled, a container without the NVLink devices, or an NCCL/driver problem).",
    },
    fix={
        "below-published": "gpudoctor check   # GPU health: NVLinks, PCIe width, clocks; then: NCCL_DEBUG=INFO gpudoctor allreduce --sizes 1G   # which transport and algorithm NCCL chose",
        "pcie-slow": "nvidia-smi -q | grep -A2 'Link Width'; nvidia-smi topo -m; sudo lspci -vvv | grep -i acsctl   # ACS on switches forces P2P through the root complex",
        "nvlink-slow": "unset NCCL_P2P_DISABLE; nvidia-smi topo -m; nvidia-smi nvlink -s; NCCL_DEBUG=INFO gpudoctor allreduce --sizes 256M   # look for 'via P2P' lines",
    },
)
