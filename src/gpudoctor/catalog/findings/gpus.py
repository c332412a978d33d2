"""Findings in the area "GPUs"."""

from gpudoctor.catalog.entry import FindingDoc

ENTRIES = (
    FindingDoc(
        id="gpu-compute-mode-restricted",
        severity="error / warn",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi`)",
        summary="A GPU's compute mode is not `Default`: `Prohibited` (`error`) or `Exclusive_Process` / `Exclusive_Thread` (`warn`).",
        evidence="Per GPU: its compute mode.",
        why="`Prohibited` allows no CUDA context at all; `Exclusive_Process` allows one process, so a second one (another rank, a DataLoader worker touching CUDA, a monitoring tool) fails with *all CUDA-capable devices are busy or unavailable*.",
        fix="""```sh
sudo nvidia-smi -i 0 -c DEFAULT
```""",
        says="Prohibited lets no process create a CUDA context; Exclusive_Process lets only one, so a second process (another rank, a DataLoader worker touching CUDA, a monitoring tool) fails with 'busy or unavailable'.",
        does="sudo nvidia-smi -i {gpus} -c DEFAULT",
    ),
    FindingDoc(
        id="gpu-memory-free",
        severity="ok",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="No other process holds memory on any GPU.",
        evidence="Per GPU: memory used / total.",
        why="A GPU shared with a forgotten notebook is a common cause of out-of-memory errors.",
        fix="Nothing to fix. When it fails it is reported as [`gpu-memory-in-use`](gpu-memory-in-use.md).",
    ),
    FindingDoc(
        id="gpu-memory-in-use",
        severity="warn",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="Before your job starts, other processes hold memory on a GPU (any compute process, or more than 5 % of the memory in use).",
        evidence="Per busy GPU: memory used / total and the processes (pid, name, memory) when the driver shows them.",
        why="That memory is not available to your job, which then runs out of memory sooner; ranks sharing a GPU with another job also run slower. In a container the other process's PID may not be visible, but its memory is.",
        fix="""Stop stale processes of yours, or choose free GPUs:

```sh
nvidia-smi
kill <pid>
export CUDA_VISIBLE_DEVICES=1
```""",
        says="Memory another job holds is not available to yours: it runs out of memory sooner, and ranks that share a GPU with a running job run slower.",
        fix_cases={
            "kill": "kill {pids}  # if they are yours and stale; else pick free GPUs with CUDA_VISIBLE_DEVICES",
            "look": "nvidia-smi  # see who uses the GPU; pick free GPUs with CUDA_VISIBLE_DEVICES",
        },
    ),
    FindingDoc(
        id="mig-enabled",
        severity="warn / info",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi`)",
        summary="Multi-Instance GPU (MIG) mode is on for a GPU: `warn`, or `info` when this process was given one MIG instance on purpose (torch sees one device, and `CUDA_VISIBLE_DEVICES` names one `MIG-` instance, or the machine has one GPU): a single-GPU job on a MIG slice is what MIG is for.",
        evidence="Per GPU: name and MIG mode; with `info`, `one instance` (how the process was given it).",
        why="A process sees at most one MIG instance, and NCCL cannot span MIG instances: DDP across several instances does not work. Multi-GPU training needs whole GPUs.",
        fix="""Turn MIG off (as root, with no process on the GPU), then reset the GPU or reboot:

```sh
sudo nvidia-smi -i 0 -mig 0
```

Nothing to do for a single-GPU job on one instance.""",
        cases={
            "several": "A process sees one MIG instance at most, and NCCL cannot span MIG instances: multi-GPU training needs whole GPUs.",
            "one-instance": "A single-GPU job on one MIG instance runs as on a small GPU; only multi-GPU training (DDP, NCCL) needs whole GPUs, since NCCL cannot span MIG instances.",
        },
        fix_cases={
            "several": "sudo nvidia-smi -i {gpus} -mig 0  # then reset the GPU or reboot",
            "one-instance": "nothing to do for a single-GPU job; for multi-GPU training use whole GPUs: sudo nvidia-smi -i {gpus} -mig 0  # then reset the GPU",
        },
    ),
    FindingDoc(
        id="no-nvidia-gpu",
        severity="info / warn",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="No NVIDIA GPU here. `info` when there is no driver and no NVIDIA device on the PCI bus (a CPU machine: torch runs on CPU and the distributed commands use gloo). `warn` when the driver is loaded but lists no GPU.",
        evidence="`NVML` (why it is unavailable, e.g. *NVML Shared Library Not Found*), `NVIDIA devices on the PCI bus`.",
        why="On a CPU machine this is expected. A loaded driver with no GPU usually means the GPUs were not passed into the container or VM.",
        fix="""Nothing to fix on a CPU machine. In a container, pass the GPUs in:

```sh
docker run --gpus all ...
nvidia-smi -L
```""",
        says="NVML works but lists no device: the GPUs are not passed into this container or VM, or they have fallen off the bus.",
        does="nvidia-smi -L  # and check the container's --gpus / device list",
    ),
    FindingDoc(
        id="non-nvidia-display-adapter",
        severity="info",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The PCI bus has a display adapter that is not NVIDIA's: an integrated Intel/AMD GPU, a server's ASPEED management VGA, a VM's virtual display.",
        evidence="`adapters` (PCI address, vendor, name, kind), `source` (`lspci` or `sysfs`).",
        why="The OS counts it as a GPU (Task Manager, `lspci | grep -i vga`), so \"I have two GPUs\" may mean one NVIDIA GPU plus this one. CUDA only sees NVIDIA GPUs, so torch does not count it.",
        fix="Nothing to fix: expect `torch.cuda.device_count()` to count only the NVIDIA GPUs.",
        says="The OS (Task Manager, lspci) counts an integrated or server-management display adapter as a GPU; CUDA only sees NVIDIA GPUs.",
    ),
    FindingDoc(
        id="nvidia-driver-missing",
        severity="error",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The PCI bus (`lspci`, or `/sys/bus/pci`) shows an NVIDIA device, but there is no working NVIDIA driver (NVML's library is missing or the kernel module is not loaded).",
        evidence="`NVML` (the reason), `NVIDIA devices on the PCI bus`.",
        why="Without the driver neither `nvidia-smi` nor torch can use the GPU.",
        fix="""Install (or load) the driver; in a container, use the NVIDIA container runtime:

```sh
sudo ubuntu-drivers install
docker run --gpus all ...
```""",
        says="The GPU is there but the driver is not installed or not loaded (or, in a container, the NVIDIA runtime did not mount it), so neither nvidia-smi nor torch can use it.",
        does="sudo ubuntu-drivers install  # or: docker run --gpus all ... for a container",
    ),
    FindingDoc(
        id="nvidia-driver",
        severity="ok",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="NVML answered: the driver version, the newest CUDA it supports, and every physical GPU it sees (NVML ignores `CUDA_VISIBLE_DEVICES`).",
        evidence="`driver`, `driver CUDA`, `GPUs` (nvidia-smi index, name, UUID).",
        why="The driver's list is the ground truth the visibility checks compare torch's view with.",
        fix="Nothing to fix.",
    ),
    FindingDoc(
        id="nvml-error",
        severity="error / warn",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="The NVIDIA management library is installed but does not work (`error`: e.g. *Driver/library version mismatch* after a driver upgrade without a reboot), or pynvml itself is missing (`warn`).",
        evidence="`NVML` (the error), `NVIDIA devices on the PCI bus`.",
        why="When NVML cannot start, CUDA usually cannot either, and gpudoctor cannot compare torch's devices with the physical GPUs.",
        fix="""```sh
nvidia-smi           # same error? then reboot, or reload the module:
sudo rmmod nvidia_uvm nvidia && sudo modprobe nvidia
pip install nvidia-ml-py   # when pynvml is missing
```""",
        cases={
            "pynvml-missing": "gpudoctor reads the physical GPUs through pynvml (the nvidia-ml-py package).",
            "init-failed": "NVML found the driver library but could not start; after a driver upgrade without a reboot this reads 'Driver/library version mismatch', and CUDA cannot start either.",
        },
        fix_cases={
            "pynvml-missing": "pip install nvidia-ml-py",
            "init-failed": "nvidia-smi  # same error? reboot, or reload the kernel module: sudo rmmod nvidia_uvm nvidia && sudo modprobe nvidia",
        },
    ),
    FindingDoc(
        id="p2p-ok",
        severity="ok",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="Every GPU pair supports direct peer-to-peer reads.",
        evidence="Per GPU pair: P2P status, topology, NVLinks.",
        why="P2P (over NVLink or PCIe) is what makes intra-node all-reduce fast.",
        fix="Nothing to fix. When it fails it is reported as [`p2p-unavailable`](p2p-unavailable.md).",
    ),
    FindingDoc(
        id="p2p-unavailable",
        severity="warn",
        area="GPUs",
        emitted_by="[`gpudoctor check`](../commands/check.md)",
        summary="NVML reports that a pair of GPUs cannot read each other's memory directly (peer-to-peer).",
        evidence="Per GPU pair: P2P status (e.g. *chipset not supported*), topology (`PIX`, `PXB`, `PHB`, `NODE`, `SYS` as in `nvidia-smi topo -m`), active NVLinks.",
        why="Without P2P, NCCL moves GPU-to-GPU traffic through host memory and all-reduce bandwidth drops. In VMs and behind PCIe ACS, P2P can also be reported yet broken, which makes NCCL hang.",
        fix="""Inspect the topology, then measure:

```sh
nvidia-smi topo -p2p r
gpudoctor allreduce
```""",
        says="Without peer-to-peer access NCCL routes GPU-to-GPU traffic through host memory, so all-reduce bandwidth drops; in VMs or behind PCIe ACS, P2P that is reported but broken makes NCCL hang.",
        does="nvidia-smi topo -p2p r  # shows which pairs can read each other; then try: gpudoctor allreduce",
    ),
)
