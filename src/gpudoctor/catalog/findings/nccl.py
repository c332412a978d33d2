"""Findings in the area "nccl"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "nccl"
EMITTED_BY = "[`gpudoctor allreduce`](../commands/allreduce.md) (after an NCCL failure)"


NCCL_BROKEN_GLOO_WORKS = FindingKind(
    id="nccl-broken-gloo-works",
    title="NCCL fails at {size} even with P2P or SHM off, but gloo works: the problem is in NCCL itself",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""NCCL failed at the size named, also with P2P off and with SHM off, but the same size on
gloo worked: the ranks and the rendezvous are fine, NCCL's own setup is not.""",
    evidence="`failing size`, `reruns`, `NCCL_DEBUG=INFO log`.",
    why="The ranks and the rendezvous are fine (gloo completes), so NCCL's own setup is failing: its network transport (NCCL_SOCKET_IFNAME, InfiniBand), a NCCL/driver mismatch, or GPUs it cannot use.",
    fix="{log_hint}   # the WARN lines name the failing call; compare `python -m gpudoctor check` on each node",
)


NCCL_NARROWING_INCONCLUSIVE = FindingKind(
    id="nccl-narrowing-inconclusive",
    title="the failure at {size} is not a transport problem: it repeats with P2P off, SHM off and with gloo",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""NCCL failed at the size named, and so did every rerun: with P2P off, with SHM off, and on
gloo. The problem is not how NCCL moves data.""",
    evidence="`failing size`, `reruns`, `NCCL_DEBUG=INFO log`.",
    why="A failure every backend reproduces comes from the rank itself (a crash, host memory, a fault injected with {fault_env}) or from the rendezvous, not from how NCCL moves data.",
    fix="{log_hint}   # and read the failing rank's finding above",
)


NCCL_P2P_BROKEN = FindingKind(
    id="nccl-p2p-broken",
    title="NCCL works with P2P disabled at {size}: PCIe P2P / ACS / IOMMU is blocking peer transfers",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""An NCCL run hung or failed, and rerunning the failing size with `NCCL_P2P_DISABLE=1`
worked: direct GPU-to-GPU transfers are what fails.""",
    evidence="""`failing size`, `reruns` (each rerun and whether it worked), `NCCL_DEBUG=INFO log`: the
failing rank's output of every run.""",
    why="Direct GPU-to-GPU copies over PCIe fail or stall when ACS on a PCIe switch redirects them, when the IOMMU is on without passthrough, or in VMs without P2P support; NCCL then hangs or errors.",
    fix="export NCCL_P2P_DISABLE=1   # works now, slower; for the real fix disable ACS (setpci) or boot with iommu=pt, and check nvidia-smi topo -p2p r",
)


NCCL_SHM_BROKEN = FindingKind(
    id="nccl-shm-broken",
    title="NCCL works with its shared-memory transport disabled at {size}: /dev/shm is the problem",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="""An NCCL run hung or failed; with P2P disabled it still failed, and with
`NCCL_SHM_DISABLE=1` it worked: NCCL's shared-memory transport is what fails.""",
    evidence="`failing size`, `reruns`, `NCCL_DEBUG=INFO log`.",
    why="NCCL passes data between local ranks through /dev/shm when P2P is not used; a small /dev/shm (containers default to 64 MB) or ranks in containers that do not share it makes it fail or hang.",
    fix="docker run --shm-size=8g (or --ipc=host) ...   # or export NCCL_SHM_DISABLE=1 (slower)",
)
