"""Findings in the area "nccl"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="nccl-broken-gloo-works",
        severity="error",
        area="nccl",
        emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) (after an NCCL failure)",
        summary="""NCCL failed at the size named, also with P2P off and with SHM off, but the same size on
gloo worked: the ranks and the rendezvous are fine, NCCL's own setup is not.""",
        evidence="`failing size`, `reruns`, `NCCL_DEBUG=INFO log`.",
        why="""NCCL's network transport (`NCCL_SOCKET_IFNAME` naming a wrong interface, InfiniBand
misconfigured), an NCCL/driver mismatch, or GPUs NCCL cannot use (wrong
`CUDA_VISIBLE_DEVICES`, a compute mode that forbids sharing) make NCCL fail while gloo,
which uses TCP on the host, works.""",
        fix="""Read the WARN lines of the log the finding names, and compare the machines:

```sh
grep -E 'WARN|error' /tmp/gpudoctor-allreduce-.../nccl-narrowing.log
python -m gpudoctor check      # on every node
```""",
        says="The ranks and the rendezvous are fine (gloo completes), so NCCL's own setup is failing: its network transport (NCCL_SOCKET_IFNAME, InfiniBand), a NCCL/driver mismatch, or GPUs it cannot use.",
        does="{log_hint}   # the WARN lines name the failing call; compare `python -m gpudoctor check` on each node",
    ),
    FindingDoc(
        id="nccl-narrowing-inconclusive",
        severity="error",
        area="nccl",
        emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) (after an NCCL failure)",
        summary="""NCCL failed at the size named, and so did every rerun: with P2P off, with SHM off, and on
gloo. The problem is not how NCCL moves data.""",
        evidence="`failing size`, `reruns`, `NCCL_DEBUG=INFO log`.",
        why="""A failure every backend reproduces comes from the rank itself (a crash, host memory, a
fault injected with `GPUDOCTOR_FAULT`) or from the rendezvous, not from a transport.""",
        fix="""Read the root-cause rank's finding above (its traceback or stack), and the log:

```sh
less /tmp/gpudoctor-allreduce-.../nccl-narrowing.log
```""",
        says="A failure every backend reproduces comes from the rank itself (a crash, host memory, a fault injected with {fault_env}) or from the rendezvous, not from how NCCL moves data.",
        does="{log_hint}   # and read the failing rank's finding above",
    ),
    FindingDoc(
        id="nccl-p2p-broken",
        severity="error",
        area="nccl",
        emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) (after an NCCL failure)",
        summary="""An NCCL run hung or failed, and rerunning the failing size with `NCCL_P2P_DISABLE=1`
worked: direct GPU-to-GPU transfers are what fails.""",
        evidence="""`failing size`, `reruns` (each rerun and whether it worked), `NCCL_DEBUG=INFO log`: the
failing rank's output of every run.""",
        why="""Peer-to-peer copies over PCIe stall or fail when ACS on a PCIe switch redirects them,
when the IOMMU is on without passthrough, or in VMs without P2P support; NCCL then hangs
at the first large collective.""",
        fix="""Works now, slower:

```sh
export NCCL_P2P_DISABLE=1
```

The real fix: disable ACS on the PCIe switches (`setpci`, or a BIOS option), boot with
`iommu=pt` (or `amd_iommu=off`/`intel_iommu=off`), and check `nvidia-smi topo -p2p r`.""",
        says="Direct GPU-to-GPU copies over PCIe fail or stall when ACS on a PCIe switch redirects them, when the IOMMU is on without passthrough, or in VMs without P2P support; NCCL then hangs or errors.",
        does="export NCCL_P2P_DISABLE=1   # works now, slower; for the real fix disable ACS (setpci) or boot with iommu=pt, and check nvidia-smi topo -p2p r",
    ),
    FindingDoc(
        id="nccl-shm-broken",
        severity="error",
        area="nccl",
        emitted_by="[`gpudoctor allreduce`](../commands/allreduce.md) (after an NCCL failure)",
        summary="""An NCCL run hung or failed; with P2P disabled it still failed, and with
`NCCL_SHM_DISABLE=1` it worked: NCCL's shared-memory transport is what fails.""",
        evidence="`failing size`, `reruns`, `NCCL_DEBUG=INFO log`.",
        why="""NCCL moves data between local ranks through `/dev/shm` when it does not use P2P; a small
`/dev/shm` (containers default to 64 MB) or ranks in containers that do not share it make
it fail or hang.""",
        fix="""```sh
docker run --shm-size=8g ...      # or --ipc=host
export NCCL_SHM_DISABLE=1         # works now, slower
```""",
        says="NCCL passes data between local ranks through /dev/shm when P2P is not used; a small /dev/shm (containers default to 64 MB) or ranks in containers that do not share it makes it fail or hang.",
        does="docker run --shm-size=8g (or --ipc=host) ...   # or export NCCL_SHM_DISABLE=1 (slower)",
    ),
)
