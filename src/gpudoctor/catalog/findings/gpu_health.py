"""Findings in the area "GPU health": memory errors, slowdowns, links and Xid faults,
read from NVML and the kernel log by `check`, and from a pasted `nvidia-smi` /
kernel log by `diagnose` (checks/gpu_health.py, commands/diagnose/nvidia_smi.py, knowledge/xid.py);
what a pasted snapshot shows GPUs doing (checks/gpu_activity.py) and a pasted DCGM report
(commands/diagnose/dcgmi.py)."""

from __future__ import annotations

from gpudoctor.catalog.kind import FindingKind
from gpudoctor.core.findings import Severity

AREA = "GPU health"
EMITTED_BY = "[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi` / `nvidia-smi -q`)"


GPU_RESET_REQUIRED = FindingKind(
    id="gpu-reset-required",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The driver says a GPU needs recovery after a fault: NVML's GPU recovery action is not `none` (reset, node reboot, drain P2P, drain and reset), `nvidia-smi -q` shows *GPU Reset Status: Reset Required / Drain and Reset Recommended: Yes* (drivers before 570), or NVML refuses queries with *GPU requires reset* (`[GPU requires reset]` in nvidia-smi).",
    evidence="Per GPU: the recovery action.",
    title="The driver says {gpus} {needs} recovery: {actions}",
    why="After an unrecoverable fault the driver marks the GPU as needing a reset (or a reboot, or a drain): until then new jobs on it fail or hang, and NVML may refuse to answer for it.",
    fix={
        "reset": "sudo nvidia-smi -r -i <gpu>  # when no process uses it (or reboot the node; ask the admin)",
        "drain-and-reset": "drain the node (stop every job on it), then reset the GPU: sudo nvidia-smi -r -i <gpu> (ask the admin)",
        "drain-p2p": "stop the jobs that use peer-to-peer (NCCL) on this GPU, then check again: gpudoctor check",
        "node-reboot": "drain the node and reboot it (ask the admin)",
        "system-reboot": "drain the node and reboot it (ask the admin)",
    },
    more_why="A job with a rank on that GPU never finishes.",
    more_fix="The fix follows the recovery action NVML reports for the first GPU; an action it does not name is treated as a reset.",
)


GPU_ECC_UNCORRECTABLE = FindingKind(
    id="gpu-ecc-uncorrectable",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A GPU counted uncorrectable (double-bit) ECC memory errors since the driver loaded (`ECC Errors / Volatile`, or the table's *Volatile Uncorr. ECC* column).",
    evidence="Per GPU: the volatile uncorrectable and corrected counts and the lifetime (aggregate) uncorrectable count.",
    title="Uncorrectable ECC memory errors since the driver loaded on {gpus}",
    why="An uncorrectable error corrupts the data of the process that read it: the driver stops that process (its rank dies, the others hang until their timeout), and the GPU is not trustworthy until it is reset.",
    fix="nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER  # then drain the node and reset the GPU when idle: sudo nvidia-smi -r -i <gpu> (ask the admin); replace it if the errors return",
    more_why="NVIDIA's memory error guides treat repeated uncorrectable errors as grounds for replacing the GPU.",
)


GPU_PAGES_PENDING_RETIREMENT = FindingKind(
    id="gpu-pages-pending-retirement",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`Retired Pages / Pending Page Blacklist: Yes`: a memory page with a double-bit error (or repeated single-bit errors) waits for a GPU reset to be taken out of use.",
    evidence="Per GPU: pages retired for single-bit and double-bit errors, and the pending flag.",
    title="Memory pages wait for a GPU reset to be retired on {gpus}",
    why="After a double-bit error the driver marks the page for retirement, but it is only taken out of use at the next reset; until then new CUDA contexts on the GPU may be refused or land on the bad page.",
    fix="sudo nvidia-smi -r -i <gpu>  # reset it when no process uses it (or reboot the node; ask the admin)",
    more_why="From NVIDIA's *Dynamic Page Retirement* guide; a driver reload maps the page out too.",
    more_fix="To see the pages first: `nvidia-smi -q -d PAGE_RETIREMENT`.",
)


GPU_ROW_REMAP_PENDING = FindingKind(
    id="gpu-row-remap-pending",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`Remapped Rows / Pending: Yes` (A100 and later): a faulty memory row is replaced at the next GPU reset.",
    evidence="Per GPU: correctable and uncorrectable remapped rows, pending, failure.",
    title="A memory row remap waits for a GPU reset on {gpus}",
    why="An uncorrectable memory error was recorded and its row is replaced at the next GPU reset; until then the affected memory is kept out of use and jobs keep running, but the same error can stop a job again.",
    fix="sudo nvidia-smi -r -i <gpu>  # when no job uses it, or reboot the node (ask the admin)",
    more_why="From NVIDIA's A100 GPU memory error management guide; row remapping exists on A100 and later GPUs.",
    more_fix="To see the rows first: `nvidia-smi -q -d ROW_REMAPPER`.",
)


GPU_ROW_REMAP_FAILED = FindingKind(
    id="gpu-row-remap-failed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`Remapped Rows / Remapping Failure Occurred: Yes`: the GPU had no spare row left for a faulty one.",
    evidence="Per GPU: correctable and uncorrectable remapped rows, pending, failure.",
    title="Row remapping failed on {gpus}: the GPU has no spare memory rows left",
    why="The GPU could not replace a faulty memory row: memory errors on it will keep stopping jobs. NVIDIA counts a remapping failure as grounds to replace the GPU.",
    fix="drain the node and ask the admin to have the GPU replaced  # nvidia-smi -q -d ROW_REMAPPER shows it",
)


GPU_CLOCKS_SLOWDOWN = FindingKind(
    id="gpu-clocks-slowdown",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="An active clock event (throttle) reason that is the hardware's, not the workload's: `HW Slowdown`, `HW Thermal Slowdown`, `HW Power Brake Slowdown` or `SW Thermal Slowdown`. `SW Power Cap` (a GPU at its power limit under load) and `Idle` are normal and not reported.",
    evidence="Per slowed GPU: the active reasons, temperature and slowdown threshold, power draw and limit.",
    title={
        "hardware": "Clocks held down by the hardware on {gpus}: {reasons}",
        "heat": "Clocks held down by heat on {gpus}: {reasons}",
    },
    why="HW Slowdown cuts the clocks by half or more (heat, the power supply's brake, or a power spike); a slowed GPU makes its rank the straggler every other rank waits for at each all-reduce.",
    fix="nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER  # check airflow and power cables; ask the admin if it persists",
    more_why="The reasons and what they do are nvml.h's clock event reasons.",
)


GPU_TEMPERATURE_HIGH = FindingKind(
    id="gpu-temperature-high",
    severity=Severity.WARN,
    also=(Severity.ERROR,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A GPU is within 2 °C of its max operating temperature or 5 °C of its slowdown threshold (`warn`), or within 5 °C of its shutdown threshold (`error`).",
    evidence="Per hot GPU: its temperature and its slowdown, shutdown and max operating thresholds.",
    title={
        "slowdown": "{gpus} {are} at the temperature where the GPU slows down",
        "shutdown": "{gpus} {are} at the temperature where the GPU slows down or shuts down",
    },
    why="At its max operating temperature, and more so at the slowdown threshold, the GPU lowers its clocks (its rank becomes the straggler); at the shutdown threshold it turns off and the job dies.",
    fix="nvidia-smi -q -d TEMPERATURE,PERFORMANCE  # check the fans and airflow of the node; ask the admin",
    more_why="Laptops and workstations set the max operating temperature far below the slowdown threshold.",
)


GPU_POWER_CAPPED = FindingKind(
    id="gpu-power-capped",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The enforced power limit is below 90 % of the GPU's default limit: someone capped it (`nvidia-smi -pl`).",
    evidence="Per GPU: the enforced limit, the default limit, the current draw.",
    title="Power limit set below the default on {gpus}",
    why="A lowered power limit lowers the clocks under load: that GPU's rank runs slower than the others and every all-reduce waits for it.",
    fix="nvidia-smi -q -d POWER  # ask the admin to restore it: sudo nvidia-smi -i <gpu> -pl <default watts>",
)


GPU_PCIE_LINK_DEGRADED = FindingKind(
    id="gpu-pcie-link-degraded",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A GPU's PCIe link trained narrower than it can (x8 of x16), or counted 1000 or more replays (resent packets) since the driver loaded.",
    evidence="Per GPU: current and maximum generation and width, replay count.",
    title={
        "narrow": "PCIe link trained narrower than it can ({narrow})",
        "replays": "PCIe link resending packets ({replays}: {limit}+ replays)",
        "narrow-and-replays": "PCIe link trained narrower than it can ({narrow}) and resending packets ({replays}: {limit}+ replays)",
    },
    why="A GPU whose PCIe link came up at x8 instead of x16 moves data to and from the host (and, without NVLink, to the other GPUs) at half the speed; many replays mean a bad slot, riser or cable. The generation drops at idle to save power, so only the width is judged.",
    fix="nvidia-smi -q -d PCI  # a narrow link or many replays: ask the admin to reseat the GPU or its riser",
    checked="The width from `nvmlDeviceGetCurrPcieLinkWidth` / `nvmlDeviceGetMaxPcieLinkWidth` (`Link Width` in `nvidia-smi -q`), the replays from `nvmlDeviceGetPcieReplayCounter` (`Replays Since Reset`).",
)


GPU_NVLINK_DEGRADED = FindingKind(
    id="gpu-nvlink-degraded",
    severity=Severity.WARN,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi` / `nvidia-smi -q`), `nvidia-smi nvlink -s` / `-e`",
    summary="Some of a GPU's NVLinks are down while others are up, every link is down on a GPU sold only as an SXM / HGX module (always NVLink-connected: `SXM`, `HBM3`, H200, B200, GB200 in its name; a PCIe card without a bridge reports its links down too and is not judged), or a link counted recovery errors (it went down and was retrained).",
    evidence="Per GPU: the links down and the links with recovery errors (and their counts).",
    title="NVLink trouble on {gpus}",
    why="A link down makes NCCL send that GPU's traffic over fewer links or PCIe (all-reduce slows for every rank; with every link down on an NVSwitch system, NCCL may hang); a link that needed recovery stalled its traffic and may fail (Xid 74).",
    fix="nvidia-smi nvlink -s; nvidia-smi nvlink -e  # then ask the admin to reset the GPUs or inspect the NVLink bridge / NVSwitch",
)


GPU_PERSISTENCE_OFF = FindingKind(
    id="gpu-persistence-off",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Persistence mode is disabled on a GPU.",
    evidence="Per GPU: its persistence mode.",
    title="Persistence mode is off on {gpus}",
    why="Without persistence mode the driver tears the GPU's state down whenever no process uses it, so every job start pays the initialisation again (seconds per GPU) and the ranks start unevenly.",
    fix="sudo nvidia-smi -pm 1  # or run nvidia-persistenced (ask the admin)",
)


GPU_HEALTH_OK = FindingKind(
    id="gpu-health-ok",
    severity=Severity.OK,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md)",
    summary="NVML shows no uncorrectable memory errors, no pending page retirement or row remap, no hardware slowdown, no hot GPU, no lowered power limit, no narrow PCIe link and no NVLink down.",
    evidence="Per GPU: ECC mode and uncorrectable count, temperature, PCIe generation and width, active clock event reasons.",
    title="No memory errors, slowdowns or degraded links on {gpus}",
    more_why="The hardware state that makes one rank crash, hang or crawl while the code is fine.",
    more_fix="Nothing to fix.",
)


GPU_XID_ERRORS = FindingKind(
    id="gpu-xid-errors",
    severity=Severity.ERROR,
    also=(Severity.WARN, Severity.INFO,),
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md) (the kernel log of this boot)",
    summary="The NVIDIA driver logged Xid lines (GPU faults) in this boot's kernel log. The severity is the worst Xid's: `error` for hardware and firmware faults (79 fallen off the bus, 48/95/140 uncorrectable memory errors, 64, 74 and 144-150 NVLink, 119/120 GSP), `warn` for a program's own fault (13, 31, 43, 94), `info` for aftermath and corrected events (45, 63, 92).",
    evidence="`source` (dmesg, the journal or /var/log/kern.log) and per Xid and GPU: the meaning, the count and the first line.",
    # The fields are the worst Xid's words from knowledge/xid.py's table: its meaning, what it does
    # to a job (its bucket's consequence) and what to do (its bucket's action); the other Xids follow.
    title={
        "one": "{gpu} reported Xid {xid}: {meaning}",
        "several": "{gpu} reported Xid {xid}: {meaning}; also {others}",
    },
    why="Xid {xid}, {meaning}: {consequence}.",
    fix={
        "one": "{action}",
        "several": "{action}; {other_actions}",
    },
    more_why="Xid lines are the driver's record of a GPU fault. A hardware one makes the rank on that GPU crash or hang and every other rank time out; the same GPU fails again. Meanings and actions follow NVIDIA's Xid catalog.",
    checked="`dmesg`, then `journalctl -k -b`, then `/var/log/kern.log` after its last boot banner, each with a 5 s limit; the first that answers is read. `diagnose` reports the same Xid lines in a pasted log as [`nvidia-xid`](../patterns/nvidia-xid.md), with the same meaning and action.",
    more_fix="""What the Xid asks for: for hardware faults, drain the node and ask the admin to reseat or replace the GPU; for a reset, `sudo nvidia-smi -r -i 0` when idle; for an application fault, rerun with `CUDA_LAUNCH_BLOCKING=1`.

```sh
sudo dmesg -T | grep -i xid
```""",
)


KERNEL_LOG_UNREADABLE = FindingKind(
    id="kernel-log-unreadable",
    severity=Severity.INFO,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md)",
    summary="None of `dmesg`, `journalctl -k -b` and `/var/log/kern.log` could be read by this user, so the GPU faults (Xid lines) of this boot are unknown.",
    evidence="`tried`: each source and why it did not answer.",
    title="Cannot read the kernel log, so GPU faults (Xid lines) of this boot are unknown",
    why="The NVIDIA driver writes GPU faults (Xid) to the kernel log; on many systems only root or the adm / systemd-journal groups may read it.",
    fix="sudo dmesg | grep -i xid  # or ask the admin to add you to the adm group",
)


LOST_WHY = ("The driver lost the GPU (it fell off the bus, Xid 79, or its firmware stopped answering): no process can use it until it is "
            "reset or the node rebooted, and a job with a rank on it hangs or dies.")
LOST_FIX = "sudo dmesg | grep -i xid  # then drain the node and reboot it; if it recurs, ask the admin to reseat or replace the GPU"
# A GPU a virtual machine's guest cannot use: what to check of the passthrough (also the fix of the driver's findings in a VM,
# knowledge/setting_fix.py)
PASSTHROUGH_FIX = ("in a VM the GPU is the host's to pass through: on the host lspci -nnk shows it bound to vfio-pci with the IOMMU on "
                   "(dmesg | grep -i -e DMAR -e IOMMU) and its whole IOMMU group passed (its audio function too); in the guest lspci lists "
                   "it and sudo dmesg | grep NVRM says why the driver refused it: a GPU with a large BAR needs a 64-bit MMIO window above "
                   "4G (q35 with OVMF, a larger pci-hole64), a consumer GPU with a driver older than 465 refuses a hypervisor it sees "
                   "(libvirt: <kvm><hidden state='on'/></kvm>; QEMU: -cpu host,kvm=off), and a GPU without a working reset needs the "
                   "host rebooted between guests; Hyper-V GPU-PV uses the host's driver files copied into the guest: copy them again "
                   "after each host driver update (Easy-GPU-PV's Update-VMGpuPartitionDriver.ps1)")

GPU_LOST = FindingKind(
    id="gpu-lost",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi`)",
    summary="""NVML counts a GPU but cannot open it: `nvmlDeviceGetHandleByIndex` fails with *GPU is lost*,
*Unknown Error* or another error that is not *Insufficient Permissions* (`check`); or `nvidia-smi`
printed *Unable to determine the device handle for GPU ...* (often *GPU is lost*) for a GPU, or
*No devices were found* (`diagnose`): the device itself does not answer. A handle refused with
*Insufficient Permissions* is another job's GPU (a cgroup or container limits the devices) and is
not this finding, nor is nvidia-smi's *Not Found*, a GPU the driver never brought up
([gpu-driver-unusable](../patterns/gpu-driver-unusable.md)); `ERR!` in a field of nvidia-smi's table is a reading that failed,
[gpu-reading-failed](gpu-reading-failed.md).""",
    evidence="Per GPU: NVML's index and its error (`check`), or what nvidia-smi said (`diagnose`); `GPUs NVML counts`; `nvidia-smi`: its *No devices were found* line.",
    title={
        "nvml": "NVML counts {count} GPUs but cannot reach {lost}",
        "nvidia-smi": "nvidia-smi cannot reach {lost}",
        "wsl": "nvidia-smi inside WSL cannot reach {lost}",
        "vm": "nvidia-smi inside the virtual machine cannot reach {lost}",
    },
    why={
        "nvml": LOST_WHY,
        "nvidia-smi": LOST_WHY,
        "wsl": "Inside WSL 2 nvidia-smi reaches the GPUs through the Windows NVIDIA driver, so a device handle it cannot get there says "
               "Windows does not pass that GPU in (a GPU in TCC mode, which WSL does not take and which beside a WDDM GPU can hide both; "
               "an old Windows driver or WSL), not that the GPU fell off the bus: nvidia-smi.exe in Windows shows the GPU as Windows sees it.",

        "vm": "In a virtual machine nvidia-smi reaches the GPU the hypervisor passes through, so a device handle it cannot get there "
              "(Unknown Error, No devices were found) says the passthrough does not hand the guest a working GPU (its memory window, a "
              "hypervisor the driver refuses, a GPU not reset between guests) more often than a GPU off the bus: the host's lspci and "
              "the guest's kernel log (NVRM lines) decide.",
    },
    fix={
        "nvml": LOST_FIX,
        "nvidia-smi": LOST_FIX,
        "wsl": "nvidia-smi.exe -q in PowerShell (Windows' view: each GPU listed with its Driver Model, WDDM or TCC); a TCC GPU: "
               "nvidia-smi.exe -i N -dm 0 (WDDM) as Administrator and reboot, or take it out of WSL's view; then update the Windows "
               "driver, wsl --update and wsl --shutdown",

        "vm": PASSTHROUGH_FIX,
    },
)


GPU_READING_FAILED = FindingKind(
    id="gpu-reading-failed",
    severity=Severity.INFO,
    also=(Severity.WARN,),
    when="warn when every reading of the GPU failed, or the driver's CUDA version (case `cuda`)",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi`)",
    summary="""The `nvidia-smi` table shows `ERR!` in a reading of a GPU it reached (fan, temperature,
performance state, power draw or cap). One failed field is a sensor or a passing read failure,
not a lost GPU; `ERR!` in the temperature, performance state and power draw together is a GPU
that answers nothing, which may be lost: `nvidia-smi -q` and the kernel log decide. `ERR!` in the
header's `CUDA Version` (case `cuda`) is the driver's reading, not a GPU's: nvidia-smi asks the user-mode
CUDA driver library (libcuda) for it, the library every CUDA program starts from, and it did not answer;
`N/A` there is no failed reading.""",
    evidence="`ERR!`: the readings that failed; `line` (case `cuda`): the header line.",
    title={
        "some": "nvidia-smi could not read {gpu}'s {readings} (ERR!); it answered for the rest",
        "every": "nvidia-smi read none of {gpu}'s sensors (ERR! in {readings})",
        "cuda": "nvidia-smi could not read the driver's CUDA version (CUDA Version: ERR!): the CUDA driver library did not answer",
    },
    why={
        "some": "nvidia-smi could not take this reading, but the GPU answered for the rest of its row: a sensor or a passing read failure, not a lost GPU.",
        "every": "Every reading of this GPU failed, though nvidia-smi still holds it: it may have fallen off the bus. nvidia-smi -q and the kernel log (Xid 79) decide whether it is lost.",
        "cuda": "nvidia-smi reads the CUDA version from the user-mode CUDA driver library (libcuda.so.1), the one torch and every CUDA program load to start CUDA. It reached the GPUs through NVML but that library did not answer: a libcuda of another driver version than the one loaded, or one that fails to initialise. CUDA programs may then fail to start CUDA (torch.cuda.is_available() False, 'CUDA driver initialization failed'); the program's own check decides.",
    },
    fix={
        "some": "nvidia-smi -q -i {index}; sudo dmesg | grep -i xid  # 'Unable to determine the device handle' or Xid 79 there: the GPU is lost; readings back: it was a passing failure",
        "every": "nvidia-smi -q -i {index}; sudo dmesg | grep -i xid  # 'Unable to determine the device handle' or Xid 79 there: the GPU is lost; readings back: it was a passing failure",
        "cuda": "python -c \"import torch; print(torch.cuda.is_available()); torch.zeros(1).cuda()\"   # False or an error: CUDA cannot start; then ldconfig -p | grep libcuda.so   # one libcuda.so.1, of the driver's version (nvidia-smi's 'Driver Version'); reinstall the driver's user-mode libraries to match",
    },
)


GPU_READING_UNSUPPORTED = FindingKind(
    id="gpu-reading-unsupported",
    severity=Severity.INFO,
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi` or `gpustat`)",
    summary="""The `nvidia-smi` table shows `Not Supported` in a GPU's memory column: the GPU has no memory of
its own for nvidia-smi to count (it shares the host's: GB10 in DGX Spark, Grace's unified memory). Not a
fault, and no reading that failed (that is `ERR!`, [gpu-reading-failed](gpu-reading-failed.md)); but a
program that reads the GPU's memory from nvidia-smi gets nothing there. Case `nvml`: gpustat shows `??` for a GPU's
utilisation or `(Not Supported)` for its processes: NVML gives neither for that GPU and driver (an older GeForce
card on an older driver), also no fault.""",
    evidence="`Not Supported`: the readings nvidia-smi does not give for the GPU.",
    title={
        "memory": "nvidia-smi does not report {gpu}'s {readings} ('Not Supported'): the GPU has none of its own to count",
        "nvml": "the GPU tool cannot show {gpu}'s {readings} ('??', 'Not Supported'): NVML gives none for this GPU and driver",
    },
    why={
        "memory": "This GPU shares the host's memory (unified memory: GB10 in DGX Spark, Grace), so nvidia-smi has no memory figure of its own to show for it: not a fault, and the GPU works. A program that reads the GPU's free or used memory from nvidia-smi (to choose a model, a batch or a device map) gets nothing there and may stop or misjudge the GPU.",
        "nvml": "gpustat and nvidia-smi read utilisation and the processes on a GPU from NVML, which gives them only where the GPU and its driver support them: an older GeForce card on an older driver (a GT 650M on 390.144) returns Not Supported, shown as '??' and '(Not Supported)'. Not a fault, and the GPU computes; only the tool cannot show how busy it is or who uses it.",
    },
    fix={
        "memory": """python -c "import torch; print(torch.cuda.mem_get_info())"   # free and total bytes as CUDA sees them; free -g for the memory the host shares""",
        "nvml": "nvidia-smi --query-gpu=name,driver_version,utilization.gpu --format=csv   # [Not Supported] there too: the card and driver do not give it; a newer driver that still supports the card may; otherwise judge the job by its own step time, not the tool's utilisation",
    },
)


# What one nvidia-smi snapshot shows GPUs doing (checks/gpu_activity.py). A snapshot is
# not a run's log: these readings are what it can say about a job, each with its margin.
SNAPSHOT = "[`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi` table)"


SPIN_STACKS = "py-spy dump --pid <pid of each rank>  # the stacks name the collective each rank waits in; a rank elsewhere (or gone) is the one the others wait for. A hang's log: gpudoctor diagnose train.log"


GPU_COLLECTIVE_SPIN = FindingKind(
    id="gpu-collective-spin",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn (exit 1) for a GPU at 90 % utilisation or more that draws under 30 % of its power cap, where the reporter says the run hangs or a later snapshot shows it again; info from 30 to 60 %, and for one snapshot alone",
    area=AREA,
    emitted_by=SNAPSHOT,
    summary="""GPUs at 90 % utilisation or more that draw a small share of their power cap. NCCL waits
for a peer with a kernel that polls a flag in memory: nvidia-smi counts that kernel as 100 %
utilisation, yet the GPU draws little more than at idle (a V100 about 70 W of 300 W, an H100
about 120 W of 700 W: 17-25 %). A GPU that computes at full utilisation draws most of its cap
(60-100 %). Below 30 % of the cap the snapshot shows ranks spinning in a collective (`warn`);
from 30 to 60 % it may be light kernels as well, or a small card whose idle draw is a large share of its cap (`info`). A GPU at 0 % is idle, not spinning.
One snapshot is one instant: a run between two steps, loading data or starting up can read the same. Below 30 % the
reading is a warning only where the input also says the run hangs (the reporter's words) or the GPU was read more than
once (a second table); otherwise it is `info`, case `snapshot`: what it saw, and what decides it.""",
    evidence="Per GPU: its utilisation, power draw and cap, and memory used.",
    title={
        "likely": "{gpus} at {util} utilisation but drawing only {share} of the power cap: ranks spinning in a collective",
        "maybe": "{gpus} at {util} utilisation drawing only {share} of the power cap: light kernels, or ranks waiting in a collective",
        "snapshot": "{gpus} at {util} utilisation drawing only {share} of the power cap, in one snapshot: ranks waiting in a collective, or a moment between steps; one reading does not decide",
    },
    why={
        "likely": "NCCL's kernel that waits for a peer counts as 100 % utilisation while it draws about what an idle GPU draws; a GPU that computes draws most of its cap. These ranks are stuck in a collective (all-reduce, broadcast, barrier) that another rank never joined: the job hangs until NCCL's timeout.",
        "maybe": "A GPU that computes at full utilisation usually draws most of its cap; this much less is either small kernels (a small model, a data-bound loop) or ranks waiting in a collective for a peer. One snapshot does not tell them apart.",
        "snapshot": "NCCL's kernel that waits for a peer counts as 100 % utilisation while it draws about what an idle GPU draws, so ranks stuck in a collective read like this; but so does a healthy run caught between two steps (waiting for its data, writing a checkpoint, starting up), and nothing else in the input says the run stopped. A second reading a minute later, or the ranks' stacks, decides.",
    },
    fix={
        "likely": SPIN_STACKS,
        "maybe": SPIN_STACKS,
        "snapshot": "nvidia-smi; sleep 60; nvidia-smi   # the same GPUs still at 100 % and low power a minute later: stuck; then py-spy dump --pid <pid of each rank> names the collective each waits in, and the job's last log line (tail -n 5 train.log) whether it still counts steps",
    },
)


GPU_RANK_IDLE = FindingKind(
    id="gpu-rank-idle",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn (exit 1) where the reporter says the run hangs or a later snapshot shows it again; info for one snapshot alone (exit 1 all the same: the snapshot is not called healthy)",
    area=AREA,
    emitted_by=SNAPSHOT,
    summary="""Two GPUs hold the same memory (within 10 %, at least 1 GiB each: the ranks of one
job) while one works (50 % utilisation or more) and the other is idle (5 % or less). The ranks of
a data-parallel job compute in step, and a rank waiting for its peers in a collective shows 100 %
(NCCL's waiting kernel): a rank at 0 % is not in any GPU work at all: it waits on the CPU (a data
loader, a file, a lock), or its process is gone while its memory is still held. GPUs that are all
idle, or that hold different memory (different jobs), are not this finding; nor is a GPU shown at 0 %
that draws 60 % of its power cap or more: it computes (GPU-Util is a sample of the last period, the
power its draw now), as the cards of a mining rig or a job between two samples do. In one snapshot alone, with no word
that the run hangs, it is `info` (case `snapshot`): a rank caught loading its next batch reads the same for an instant.""",
    evidence="Per GPU: utilisation and memory used, for the idle GPUs and the busy ones of the same job.",
    title={
        "stopped": "{idle} {holds} the same memory as {busy} (one job) but {are} idle while {busy} {works}: a rank stopped outside the GPU",
        "snapshot": "{idle} {holds} the same memory as {busy} (one job) but {are} idle while {busy} {works}, in one snapshot: a rank stopped outside the GPU, or one caught between two steps; one reading does not decide",
    },
    why={
        "stopped": "The ranks of one job work in step, and a rank waiting in a collective still shows NCCL's kernel at 100 %. A rank at 0 % with its memory held is stuck on the CPU side (data loading, I/O, a deadlock) or its process died: its peers hang in the next collective until NCCL's timeout.",
        "snapshot": "The ranks of one job work in step, and a rank waiting in a collective still shows NCCL's kernel at 100 %; a rank at 0 % with its memory held is on the CPU side. Stuck there (data loading, I/O, a deadlock, its process gone) its peers hang; but a rank loading its next batch reads the same for an instant, and nothing else in the input says the run stopped. A second reading a minute later decides.",
    },
    fix={
        "stopped": "py-spy dump --pid <pid on the idle GPU>  # where it stopped; nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv shows whether its process still exists",
        "snapshot": "nvidia-smi; sleep 60; nvidia-smi   # the same GPU still idle beside its busy peers a minute later: stopped; then py-spy dump --pid <pid on the idle GPU> shows where, and nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory --format=csv whether its process still exists",
    },
)


GPU_UNUSED = FindingKind(
    id="gpu-unused",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=SNAPSHOT,
    summary="""A GPU works (50 % or more) while other GPUs shown are idle and hold no memory (under
100 MiB: no process has a CUDA context there). One job on one GPU by design looks the same, so
the snapshot does not decide: the launch command does (one process started with `python
train.py` where `torchrun --nproc_per_node` was meant, or `CUDA_VISIBLE_DEVICES` naming one GPU).""",
    evidence="Per GPU: utilisation and memory used.",
    title="Only {busy} of the {count} GPUs shown {works}; {idle} {holds} no memory (no process uses {them})",
    why="No process has a CUDA context on {idle}. If the job was meant to use every GPU, it started one process (python train.py runs one; DataParallel, device_map or a launcher spreads the work) or CUDA_VISIBLE_DEVICES hid the rest; if it was meant for one GPU, this is as it should be.",
    fix="torchrun --nproc_per_node {count} train.py  # one process per GPU; check CUDA_VISIBLE_DEVICES and the launch command first (gpudoctor check shows what the job can see)",
)


GPU_MEMORY_UNEVEN = FindingKind(
    id="gpu-memory-uneven",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn (exit 1) when the fullest GPU is 95 % full or more; info otherwise",
    area=AREA,
    emitted_by=SNAPSHOT,
    summary="""Among GPUs that all work (50 % or more), one holds 1.5 times the memory of another or
more. DataParallel gathers every replica's outputs and keeps the model's master copy on its first
device, and ranks that never call `torch.cuda.set_device` put a context on GPU 0: both load one GPU
more than the rest. At 95 % full or more that GPU is at the edge of an out-of-memory error
(`warn`); below, it is uneven but fits (`info`). Pipeline or model parallelism split memory
unevenly by design.""",
    evidence="Per GPU: memory used and total, utilisation.",
    title={
        "full": "{big} is full ({used}) while {others} of the same work {hold} {ratio}x less: uneven memory, the first GPU runs out",
        "fits": "{big} holds {ratio}x the memory of {others} ({used}): uneven memory across the GPUs that work",
    },
    why={
        "full": "One GPU holds far more than the others that work beside it: DataParallel's first device (it gathers the outputs and holds the master weights) or extra CUDA contexts of the other ranks on GPU 0. That GPU is full: more GPUs or a larger batch run it out of memory while the others have room.",
        "fits": "One GPU holds far more than the others that work beside it: DataParallel's first device, extra contexts of the other ranks on GPU 0, or a pipeline's first stage (uneven by design).",
    },
    fix="torchrun --nproc_per_node <gpus> train.py  # DistributedDataParallel keeps the ranks even (Trainer and accelerate use it under a distributed launch); in your own DDP code call torch.cuda.set_device(local_rank) before any CUDA work",
)


GPU_MEMORY_WITHOUT_PROCESS = FindingKind(
    id="gpu-memory-without-process",
    severity=Severity.WARN,
    also=(Severity.INFO,),
    when="warn (exit 1) when nvidia-smi lists processes but none for the memory, or names a holder *Unknown Error*; info when it lists no process at all",
    area=AREA,
    emitted_by=SNAPSHOT,
    summary="""nvidia-smi's process list is shown, read to its end, and GPU memory (100 MiB or more) is held
by no process it can name: a process named *Unknown Error* (one that exited but whose memory the
driver has not freed, a zombie, or one outside this PID namespace), or a GPU with memory and no
process while the list shows processes on other GPUs (`warn`). When the list says *No running
processes found* on every GPU it does not decide (`info`): inside a container nvidia-smi lists no
process, the container's own included, and MIG instances, vGPU and the driver's own reservations
hold memory that no process is listed for. A snapshot does not tell leaked memory from these; the
host's process list does: memory held on an idle GPU while the host lists no process for it is
leaked. A snapshot cut before or inside its process list is not judged, and memory shown as *Not
Supported* or *N/A* (unified-memory GPUs such as GB10, MIG, vGPU) is an unknown value, held by no
one as far as the snapshot says.""",
    evidence="Per GPU: memory used and the processes listed on it.",
    title={
        "unnamed": "Processes nvidia-smi cannot name (Unknown Error) hold memory on {gpus}",
        "unlisted": "{gpus} {hold} memory that no listed process holds",
        "none-listed": "nvidia-smi lists no process, yet {gpus} {hold} memory",
    },
    why={
        "unnamed": "A process nvidia-smi cannot name has exited (a zombie whose memory the driver has not freed) or lives outside this PID namespace (another container's process): its memory is taken from the next job, which runs out of memory or shares the GPU with another process.",
        "unlisted": "nvidia-smi lists processes on the other GPUs but none for this memory: a process it cannot see holds it (another container's job), a MIG or vGPU instance reserves it, or a killed process left it behind. The snapshot does not tell which; the host's process list does. If it is a leftover, the next job on this GPU runs out of memory or shares it.",
        "none-listed": "No process is listed on any GPU, which does not decide a leak: inside a container nvidia-smi lists none (yours included), and MIG instances, vGPU and the driver's reservations hold memory with no process listed. The memory is leaked only if the host's own process list shows nothing on the GPU while it stays held on an idle GPU.",
    },
    fix={
        "unnamed": "sudo fuser -v /dev/nvidia*  # on the host: the processes that hold the GPUs; kill the leftover ones (kill -9 <pid>), or reset the idle GPU: sudo nvidia-smi -r -i <gpu>",
        "unlisted": "nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv; sudo fuser -v /dev/nvidia*   # on the host, not in a container: a process listed there holds the memory; only if none does while the GPU idles is it leaked (then: sudo nvidia-smi -r -i <gpu>)",
        "none-listed": "nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv; sudo fuser -v /dev/nvidia*   # on the host, not in a container: they decide it; nothing to do when they list the holder (a job, MIG, vGPU) or the memory is freed when it ends",
    },
)


_SET_DEVICE_FIRST = "torch.cuda.set_device(local_rank)  # first thing in each rank, before any CUDA call; or start each rank with CUDA_VISIBLE_DEVICES=<its GPU>"


GPU_PROCESS_ON_EVERY_GPU = FindingKind(
    id="gpu-process-on-every-gpu",
    severity=Severity.WARN,
    when="exit 1: the snapshot shows the ranks' device selection is wrong, whether or not the extra entries hold memory yet",
    area=AREA,
    emitted_by=SNAPSHOT + ", gpustat",
    summary="""The process list shows the processes of one job on other GPUs than their own: two or
more processes (pids) each listed on several GPUs, or (gpustat, which names users, not pids) one
owner listed more than once on several GPUs. Each rank of a DDP job should use one GPU; an entry on
another GPU is a CUDA context that rank created there; when every such entry is on one GPU (the ranks' own spread over
the others), each rank touched that GPU before selecting its own (case `one-gpu`: a CUDA call before `set_device`, a
checkpoint loaded without `map_location`). Rows pasted without the list's header are read too. One process on every GPU
(DataParallel, a model split across GPUs) is not this finding.""",
    evidence="Per GPU: the processes listed on it and their memory.",
    title={
        "memory": "The job's processes are listed on every GPU ({gpus}), {extra} on GPUs not their own: every rank opened every GPU",
        "empty": "The job's processes are listed on every GPU ({gpus}): {extra} on GPUs not their own, every rank opened every GPU",
        "one-gpu": "{count} of the job's processes (pids {pids}) also hold a context on GPU {gpu} ({extra}) beside their own GPU: each touched GPU {gpu} before selecting its own",
    },
    why={
        "memory": "A rank listed on another GPU created a CUDA context there: it did not call torch.cuda.set_device(local_rank) before its first CUDA call, or code touched every device (torch.cuda.empty_cache, a barrier without device_ids, a tensor moved to 'cuda' without an index). Each context takes hundreds of MiB, most of them on GPU 0, which runs out of memory first.",
        "empty": "A rank listed on another GPU opened it (no set_device before its first CUDA call, or code that touches every device). These entries hold no memory yet, but the ranks' device selection is wrong: once a rank allocates there (a barrier, empty_cache, a tensor sent to 'cuda'), each entry becomes a context of hundreds of MiB, most of them on GPU 0.",
        "one-gpu": "Each of these ranks created a CUDA context on GPU {gpu} before it selected its own GPU: a CUDA call before torch.cuda.set_device(local_rank), a tensor or model sent to 'cuda' without an index, or torch.load of a checkpoint saved on GPU {gpu} without map_location. Each such context holds hundreds of MiB of GPU {gpu} for the job's whole life: that GPU runs out of memory first, or its own rank runs slower than the others.",
    },
    fix={
        "memory": _SET_DEVICE_FIRST,
        "empty": _SET_DEVICE_FIRST,
        "one-gpu": "torch.cuda.set_device(local_rank)  # first thing in each rank, before any CUDA call; and torch.load(path, map_location=f'cuda:{{local_rank}}') (or 'cpu') for a checkpoint saved from GPU {gpu}",
    },
)


_DCGM_DIAG_FIX = "dcgmi diag -r 3  # read its Warning lines: they name the GPU and the fault; drain the node and ask the admin to reset, reseat or replace that GPU"
GPU_DCGM_FAILED = FindingKind(
    id="gpu-dcgm-failed",
    severity=Severity.ERROR,
    also=(Severity.WARN,),
    when="error for a test `dcgmi diag` failed or `dcgmi health` *Failure*; warn for `dcgmi health` *Warning* and for a `dcgmi dmon` field read on no GPU",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `dcgmi diag`, `dcgmi health -c` or `dcgmi dmon`)",
    summary="""A pasted DCGM report gives its own verdict: a `dcgmi diag` test that reads *Fail* (the
report's *Warning* lines say which GPU and why), or `dcgmi health -c`'s *Overall Health: Failure*
(`error`) or *Warning* (`warn`). Tests that pass or are skipped are not reported. A `dcgmi dmon` sample whose field
reads N/A on every GPU in every row (two rows or more) is a field DCGM did not collect at all (case `dmon`, `warn`); a
field that reads N/A on some rows only is a sample that came late, no fault.""",
    evidence="`failed`: each failed test (or health system) and its result, or each field dmon read on no GPU; `warnings`: DCGM's own lines.",
    title={
        "diag": "dcgmi diag failed on this node: {tests}",
        "health": "dcgmi health reports {overall}: {tests}",
        "dmon": "dcgmi dmon read no value of {tests} on any GPU ({rows} rows, all N/A)",
    },
    why={
        "diag": "DCGM ran its own tests on the GPUs and these failed: its verdict on the hardware, not a guess from symptoms. A job on a failing GPU crashes, hangs or runs slow.",
        "health": "DCGM's health watches (memory, PCIe, NVLink, thermal, power, driver) flagged the GPUs: the lines below it say which GPU and what it saw.",
        "dmon": "dmon prints N/A for a field it got no value of; on every GPU and every row, the field is not being collected. "
        "The profiling fields (1001-1014: SMACT, SMOCC, TENSO, DRAMA, ...) come from the GPU's performance counters through "
        "DCGM's profiling module: none when the GPU or the driver does not support them, when another profiler holds the "
        "counters (Nsight Systems or Compute, another DCGM or dcgm-exporter on the node), or when the host engine cannot "
        "watch the field alone (NVIDIA/DCGM#244: SMACT read N/A alone and values beside other profiling fields).",
    },
    fix={
        "diag": _DCGM_DIAG_FIX,
        "health": _DCGM_DIAG_FIX,
        "dmon": "dcgmi profile -l   # the profiling fields this GPU supports; stop other profilers on the node (dcgmi profile --pause "
        "on another DCGM), then sample the field beside another one (dcgmi dmon -e 1001,1002) and read nv-hostengine's log "
        "(/var/log/nv-hostengine.log) for the watch that failed",
    },
)


GPU_P2P_BROKEN = FindingKind(
    id="gpu-p2p-broken",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `p2pBandwidthLatencyTest`)",
    summary="""A pasted `p2pBandwidthLatencyTest` (CUDA samples) whose *P2P=Enabled* matrices show peer traffic
that stalls or barely flows: a median P2P write latency between two GPUs of a millisecond or more (it
takes a few microseconds over NVLink, tens over PCIe), or enabled copies under 1 GB/s. The GPUs report
peer access, but the PCIe fabric drops or delays their traffic: ACS on a PCIe switch or root port
redirecting it through the root complex, the IOMMU (VT-d/AMD-Vi) translating it, or a VM's passthrough.
Matrices that look healthy are not reported.""",
    evidence="`matrices`: per enabled matrix read, the median between two GPUs (and a GPU to itself).",
    title="GPU-to-GPU (P2P) traffic is broken on this machine: {reading}",
    why=" ".join("""Peer-to-peer copies between the GPUs stall: the GPUs say P2P works, so NCCL and CUDA use it, and the traffic is
lost or delayed in the PCIe fabric (ACS or the IOMMU in its path). Collectives between these GPUs then hang or crawl,
while one GPU alone is fine.""".split()),
    fix=" ".join("""NCCL_P2P_DISABLE=1   # for the job: NCCL copies through host memory instead; then fix the machine: disable ACS on
the PCIe switches (setpci, or the BIOS's ACS/PCIe settings) and the IOMMU or set it to passthrough (iommu=pt, or
intel_iommu=off / amd_iommu=off on the kernel command line); rerun p2pBandwidthLatencyTest: P2P=Enabled latency should be a
few microseconds""".split()),
)



GPU_JOB_IDLE = FindingKind(
    id="gpu-job-idle",
    severity=Severity.WARN,
    when="exit 1; only beside the reporter's words that the GPU does no work (a snapshot alone is a job between two steps)",
    area=AREA,
    emitted_by=SNAPSHOT,
    summary="""Every GPU the snapshot shows is idle (5 % utilisation or less), one or more hold a job's memory (1 GiB or more: its
weights and activations), and the reporter says the utilisation stays at 0 or the GPU is not used ("the Volatile GPU-Util
is always 0", "Gpu-Util is 0%"). The job is on the GPU, and the GPU waits: on the input pipeline (images decoded and augmented by too
few DataLoader workers, a slow disk or network file system), on work the program does on the CPU between steps, or on a
stall (a lock, a collective another rank never joins). One snapshot alone reads the same as a job between two steps, so
without the reporter's words it is not reported. The same reading without a job's memory is
[gpu-not-used](gpu-not-used.md) (the job is not on the GPU at all).""",
    evidence="Per GPU holding the job's memory: utilisation and memory used; `the reporter says`: the sentence, with its line.",
    title="GPU job idle: {gpus} {hold} the job's memory but {compute} nothing ({util}), as the reporter says",
    why="A GPU that holds a job's weights and activations and shows no utilisation, in the snapshot and as the reporter watches it, is waiting for its next batch or its next kernel: the job's time goes to its input pipeline (decoding and augmenting data on the CPU, too few DataLoader workers, a slow disk), to CPU work between steps, or to a stall. The GPU is not the bottleneck and the job runs slowly, or not at all.",
    fix="py-spy dump --pid <PID>   # where the job's main thread waits: a DataLoader's next() or CPU work is the input pipeline (DataLoader(..., num_workers=<CPU cores>, pin_memory=True, persistent_workers=True); time the loader alone: for batch in loader: pass), a collective or a lock is a stall",
)


GPU_NOT_USED = FindingKind(
    id="gpu-not-used",
    severity=Severity.INFO,
    also=(Severity.WARN,),
    when="info in a snapshot alone; warn (exit 1) where the reporter also says the job does not use the GPU",
    area=AREA,
    emitted_by=SNAPSHOT,
    summary="""Every GPU the snapshot shows is idle (5 % utilisation or less) and none holds a job's memory (under 1 GiB:
no weights or activations, at most a bare CUDA context or a display's). A GPU a job trains on shows its kernels at work
or, between them, the job's memory; here no GPU shows either, so at the moment of the snapshot no job is using them: the
program runs on the CPU (a CPU-only torch, a device left at `cpu`, a program built or started without its GPU option, a
GPU the program cannot see) or it had not started or had already ended. One snapshot does not tell these apart, and a
snapshot pasted to show the machine (an issue's environment section) looks the same, so it is info (case `snapshot`):
what decides is a snapshot taken while the job runs and the job's own view of CUDA. Where the reporter also says the job
does not use the GPU ("# GPU usage is 0", "why is it not running on GPU?", case `said`), the snapshot is the one taken
while the job runs, and it is a warning. GPUs that hold a job's memory while idle are not this
finding (a job between steps, or waiting), nor is one idle GPU beside a busy one (`gpu-unused`).""",
    evidence="Per GPU: utilisation and memory used; `the reporter says` (case `said`): the sentence, with its line.",
    title="GPU not used: {gpus} {are} idle and {hold} no job's memory (no job computes on {them} in this snapshot)",
    why={
        "snapshot": "A job that uses a GPU keeps its weights and activations there (1 GiB or more) and shows utilisation while it computes; {gpus} {show} neither. If the snapshot was taken while the job ran, the job is not on the GPU: it runs on the CPU (a torch built without CUDA, a model or a device left at 'cpu', a program built or started without its GPU option) or cannot see the GPU (CUDA_VISIBLE_DEVICES, a container without it, a driver torch cannot use). If the job was not running, the snapshot says nothing about it.",
        "said": "A job that uses a GPU keeps its weights and activations there (1 GiB or more) and shows utilisation while it computes; {gpus} {show} neither, while the reporter says the job runs and does not use the GPU: it runs on the CPU (a torch built without CUDA, a model or a device left at 'cpu', a program built or started without its GPU option) or cannot see the GPU (CUDA_VISIBLE_DEVICES, a container without it, a driver torch cannot use).",
    },
    fix={
        "snapshot": "take the snapshot while the job runs (watch -n 1 nvidia-smi): if its process never appears, run in the job's own environment python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\" and check the program's GPU option and where it puts the model (.to('cuda'))",
        "said": "python -c \"import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available())\"   # in the job's own environment: False, or a +cpu version, is a torch without CUDA (install the CUDA build); True: check the program's GPU option and where it puts the model (.to('cuda'))",
    },
)
