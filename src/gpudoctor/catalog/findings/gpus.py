"""Findings in the area "GPUs"."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "GPUs"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md)"


GPU_COMPUTE_MODE_RESTRICTED = FindingKind(
    id="gpu-compute-mode-restricted",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi`)",
    summary="A GPU's compute mode is not `Default`: `Prohibited` (`error`) or `Exclusive_Process` / `Exclusive_Thread` (`warn`).",
    evidence="Per GPU: its compute mode.",
    title="Restricted compute mode: {modes}",
    why="Prohibited lets no process create a CUDA context; Exclusive_Process lets only one, so a second process (another rank, a DataLoader worker touching CUDA, a monitoring tool) fails with 'busy or unavailable'.",
    fix="sudo nvidia-smi -i {gpus} -c DEFAULT",
)


GPU_MEMORY_FREE = FindingKind(
    id="gpu-memory-free",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="No other process holds memory on any GPU.",
    evidence="Per GPU: memory used / total.",
    title="No other process holds GPU memory",
    more_why="A GPU shared with a forgotten notebook is a common cause of out-of-memory errors.",
    more_fix="Nothing to fix. When it fails it is reported as [`gpu-memory-in-use`](gpu-memory-in-use.md).",
)


GPU_MEMORY_IN_USE = FindingKind(
    id="gpu-memory-in-use",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Before your job starts, other processes hold memory on a GPU (any compute process, or more than 5 % of the memory in use).",
    evidence="Per busy GPU: memory used / total and the processes (pid, name, memory) when the driver shows them.",
    title="Other processes already hold memory on {gpus}: {used}",
    why="Memory another job holds is not available to yours: it runs out of memory sooner, and ranks that share a GPU with a running job run slower.",
    fix={
        "kill": "kill {pids}  # if they are yours and stale; else pick free GPUs with CUDA_VISIBLE_DEVICES",
        "look": "nvidia-smi  # see who uses the GPU; pick free GPUs with CUDA_VISIBLE_DEVICES",
    },
)


MIG_ENABLED = FindingKind(
    id="mig-enabled",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi`)",
    summary="Multi-Instance GPU (MIG) mode is on for a GPU: `warn`, or `info` when this process was given one MIG instance on purpose (torch sees one device, and `CUDA_VISIBLE_DEVICES` names one `MIG-` instance, or the machine has one GPU): a single-GPU job on a MIG slice is what MIG is for.",
    evidence="Per GPU: name and MIG mode; with `info`, `one instance` (how the process was given it).",
    title={
        "several": "MIG is enabled on {named}",
        "one-instance": "MIG is enabled on {named}: this process runs on one MIG instance, which serves a single-GPU job",
    },
    why={
        "several": "A process sees one MIG instance at most, and NCCL cannot span MIG instances: multi-GPU training needs whole GPUs.",
        "one-instance": "A single-GPU job on one MIG instance runs as on a small GPU; only multi-GPU training (DDP, NCCL) needs whole GPUs, since NCCL cannot span MIG instances.",
    },
    fix={
        "several": "sudo nvidia-smi -i {gpus} -mig 0  # then reset the GPU or reboot",
        "one-instance": "nothing to do for a single-GPU job; for multi-GPU training use whole GPUs: sudo nvidia-smi -i {gpus} -mig 0  # then reset the GPU",
    },
)


NO_NVIDIA_GPU = FindingKind(
    id="no-nvidia-gpu",
    severity=Severity.INFO,
    also=(Severity.WARN,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="No NVIDIA GPU here. `info` when there is no driver and no NVIDIA device on the PCI bus (a CPU machine: torch runs on CPU and the distributed commands use gloo). `warn` when the driver is loaded but lists no GPU.",
    evidence="`NVML` (why it is unavailable, e.g. *NVML Shared Library Not Found*), `NVIDIA devices on the PCI bus`.",
    title={
        "none-listed": "The NVIDIA driver is loaded but reports no GPU",
        "no-driver": "No NVIDIA driver or GPU on this machine ({error})",
    },
    why="NVML works but lists no device: the GPUs are not passed into this container or VM, or they have fallen off the bus.",
    fix="nvidia-smi -L  # and check the container's --gpus / device list",
)


NON_NVIDIA_DISPLAY_ADAPTER = FindingKind(
    id="non-nvidia-display-adapter",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The PCI bus has a display adapter that is not NVIDIA's: an integrated Intel/AMD GPU, a server's ASPEED management VGA, a VM's virtual display.",
    evidence="`adapters` (PCI address, vendor, name, kind), `source` (`lspci` or `sysfs`).",
    title="{adapters} on the PCI bus: not usable by CUDA, not counted by torch",
    why="The OS (Task Manager, lspci) counts an integrated or server-management display adapter as a GPU; CUDA only sees NVIDIA GPUs.",
    more_fix="Nothing to fix: expect `torch.cuda.device_count()` to count only the NVIDIA GPUs.",
)


NVIDIA_DRIVER_MISSING = FindingKind(
    id="nvidia-driver-missing",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The PCI bus (`lspci`, or `/sys/bus/pci`) shows an NVIDIA device, but there is no working NVIDIA driver (NVML's library is missing or the kernel module is not loaded).",
    evidence="`NVML` (the reason), `NVIDIA devices on the PCI bus`.",
    title="No working NVIDIA driver, but the PCI bus shows {devices}",
    why="The GPU is there but the driver is not installed or not loaded (or, in a container, the NVIDIA runtime did not mount it), so neither nvidia-smi nor torch can use it.",
    fix="sudo ubuntu-drivers install  # or: docker run --gpus all ... for a container",
)


NVIDIA_DRIVER = FindingKind(
    id="nvidia-driver",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="NVML answered: the driver version, the newest CUDA it supports, and every physical GPU it sees (NVML ignores `CUDA_VISIBLE_DEVICES`).",
    evidence="`driver`, `driver CUDA`, `GPUs` (nvidia-smi index, name, UUID).",
    title="NVIDIA driver {driver} (CUDA {cuda}), {gpus}",
    more_why="The driver's list is the ground truth the visibility checks compare torch's view with.",
    more_fix="Nothing to fix.",
)


NVML_ERROR = FindingKind(
    id="nvml-error",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The NVIDIA management library is installed but does not work (`error`: e.g. *Driver/library version mismatch* after a driver upgrade without a reboot), or pynvml itself is missing (`warn`).",
    evidence="`NVML` (the error), `NVIDIA devices on the PCI bus`.",
    title={
        "pynvml-missing": "Cannot ask the NVIDIA driver about GPUs: {error}",
        "init-failed": "The NVIDIA driver is installed but does not answer: {error}",
    },
    why={
        "pynvml-missing": "gpudoctor reads the physical GPUs through pynvml (the nvidia-ml-py package).",
        "init-failed": "NVML found the driver library but could not start; after a driver upgrade without a reboot this reads 'Driver/library version mismatch', and CUDA cannot start either.",
    },
    fix={
        "pynvml-missing": "pip install nvidia-ml-py",
        "init-failed": "nvidia-smi  # same error? reboot, or reload the kernel module: sudo rmmod nvidia_uvm nvidia && sudo modprobe nvidia",
    },
)


P2P_OK = FindingKind(
    id="p2p-ok",
    severity=Severity.OK,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Every GPU pair supports direct peer-to-peer reads.",
    evidence="Per GPU pair: P2P status, topology, NVLinks.",
    title="P2P works between {pairs}",
    more_why="P2P (over NVLink or PCIe) is what makes intra-node all-reduce fast.",
    more_fix="Nothing to fix. When it fails it is reported as [`p2p-unavailable`](p2p-unavailable.md).",
)


P2P_UNAVAILABLE = FindingKind(
    id="p2p-unavailable",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="NVML reports that a pair of GPUs cannot read each other's memory directly (peer-to-peer).",
    evidence="Per GPU pair: P2P status (e.g. *chipset not supported*), topology (`PIX`, `PXB`, `PHB`, `NODE`, `SYS` as in `nvidia-smi topo -m`), active NVLinks.",
    title="No direct P2P between {pairs}",
    why="Without peer-to-peer access NCCL routes GPU-to-GPU traffic through host memory, so all-reduce bandwidth drops; in VMs or behind PCIe ACS, P2P that is reported but broken makes NCCL hang.",
    fix="nvidia-smi topo -p2p r  # shows which pairs can read each other; then try: gpudoctor allreduce",
)
