"""Findings in the area "GPU health": memory errors, slowdowns, links and Xid faults,
read from NVML and the kernel log by `check`, and from a pasted `nvidia-smi` /
kernel log by `diagnose` (checks/gpu_health.py, commands/diagnose/nvidia_smi.py, knowledge/xid.py)."""

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
    more_why="After an unrecoverable fault the GPU stays unusable until it is reset (or the node rebooted, or drained): new jobs on it fail or hang, and a job with a rank on it never finishes.",
    more_fix="""What the driver asks for; for a reset (needs root, no process on the GPU):

```sh
sudo nvidia-smi -r -i 0
```

For *drain and reset*, stop every job on the node first; for a reboot, drain the node and reboot it.""",
)


GPU_ECC_UNCORRECTABLE = FindingKind(
    id="gpu-ecc-uncorrectable",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A GPU counted uncorrectable (double-bit) ECC memory errors since the driver loaded (`ECC Errors / Volatile`, or the table's *Volatile Uncorr. ECC* column).",
    evidence="Per GPU: the volatile uncorrectable and corrected counts and the lifetime (aggregate) uncorrectable count.",
    more_why="An uncorrectable error corrupts the data of the process that read it: the driver stops that process, so its rank dies and the others wait until their collective times out. The GPU is not trustworthy until it is reset; NVIDIA's memory error guides treat repeated ones as grounds for replacement.",
    more_fix="""Stop the jobs on that GPU and reset it when it is idle (needs root: ask the admin), or reboot the node:

```sh
nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER
sudo nvidia-smi -r -i 0
```

If the errors come back after the reset, drain the node and have the GPU replaced.""",
)


GPU_PAGES_PENDING_RETIREMENT = FindingKind(
    id="gpu-pages-pending-retirement",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`Retired Pages / Pending Page Blacklist: Yes`: a memory page with a double-bit error (or repeated single-bit errors) waits for a GPU reset to be taken out of use.",
    evidence="Per GPU: pages retired for single-bit and double-bit errors, and the pending flag.",
    more_why="NVIDIA's *Dynamic Page Retirement* guide: after a double-bit error, no new CUDA context is created on the GPU until the page is mapped out, which happens at the next reset or driver reload.",
    more_fix="""Stop the jobs on that GPU and reset it when it is idle (needs root: ask the admin), or reboot the node:

```sh
nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER
sudo nvidia-smi -r -i 0
```""",
)


GPU_ROW_REMAP_PENDING = FindingKind(
    id="gpu-row-remap-pending",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`Remapped Rows / Pending: Yes` (A100 and later): a faulty memory row is replaced at the next GPU reset.",
    evidence="Per GPU: correctable and uncorrectable remapped rows, pending, failure.",
    more_why="NVIDIA's A100 memory error management guide: until the reset, unaffected jobs keep running and new ones may start, but the error that caused it already stopped a job and can again.",
    more_fix="""Stop the jobs on that GPU and reset it when it is idle (needs root: ask the admin), or reboot the node:

```sh
nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER
sudo nvidia-smi -r -i 0
```""",
)


GPU_ROW_REMAP_FAILED = FindingKind(
    id="gpu-row-remap-failed",
    severity=Severity.ERROR,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="`Remapped Rows / Remapping Failure Occurred: Yes`: the GPU had no spare row left for a faulty one.",
    evidence="Per GPU: correctable and uncorrectable remapped rows, pending, failure.",
    more_why="Memory errors on that GPU can no longer be repaired in hardware: jobs on it will keep being stopped. NVIDIA's RMA policy counts a remapping failure as grounds to replace the GPU.",
    more_fix="Drain the node (leave it out of the job's node list) and ask the admin to have the GPU replaced: `nvidia-smi -q -d ROW_REMAPPER` shows the state.",
)


GPU_CLOCKS_SLOWDOWN = FindingKind(
    id="gpu-clocks-slowdown",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="An active clock event (throttle) reason that is the hardware's, not the workload's: `HW Slowdown`, `HW Thermal Slowdown`, `HW Power Brake Slowdown` or `SW Thermal Slowdown`. `SW Power Cap` (a GPU at its power limit under load) and `Idle` are normal and not reported.",
    evidence="Per slowed GPU: the active reasons, temperature and slowdown threshold, power draw and limit.",
    more_why="HW Slowdown cuts the clocks by half or more (nvml.h: heat, the power supply's brake signal, or a power spike). The slowed GPU's rank becomes the straggler every other rank waits for at each all-reduce.",
    more_fix="""```sh
nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER
```

Check the node's airflow and the GPU's power cables; if it persists, ask the admin to inspect the node.""",
)


GPU_TEMPERATURE_HIGH = FindingKind(
    id="gpu-temperature-high",
    severity=Severity.WARN,
    also=(Severity.ERROR,),
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A GPU is within 2 °C of its max operating temperature or 5 °C of its slowdown threshold (`warn`), or within 5 °C of its shutdown threshold (`error`).",
    evidence="Per hot GPU: its temperature and its slowdown, shutdown and max operating thresholds.",
    more_why="The GPU lowers its clocks to stay below its max operating temperature (laptops and workstations set it far below the slowdown threshold), more so at the slowdown threshold, and its rank falls behind; at the shutdown threshold it turns off and the job dies.",
    more_fix="`nvidia-smi -q -d TEMPERATURE`; check the fans and airflow, then ask the admin.",
)


GPU_POWER_CAPPED = FindingKind(
    id="gpu-power-capped",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="The enforced power limit is below 90 % of the GPU's default limit: someone capped it (`nvidia-smi -pl`).",
    evidence="Per GPU: the enforced limit, the default limit, the current draw.",
    more_why="A lower power limit lowers the clocks under load, so that GPU's rank is slower than the others and every collective waits for it.",
    more_fix="""Ask the admin to restore the default limit:

```sh
nvidia-smi -q -d POWER
sudo nvidia-smi -i 0 -pl 700
```""",
)


GPU_PCIE_LINK_DEGRADED = FindingKind(
    id="gpu-pcie-link-degraded",
    severity=Severity.WARN,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="A GPU's PCIe link trained narrower than it can (x8 of x16), or counted 1000 or more replays (resent packets) since the driver loaded.",
    evidence="Per GPU: current and maximum generation and width, replay count.",
    more_why="A narrow link halves host-to-GPU bandwidth and, without NVLink, GPU-to-GPU bandwidth; many replays point at a bad slot, riser or cable. The generation is not judged: GPUs drop to a lower generation at idle to save power.",
    checked="The width from `nvmlDeviceGetCurrPcieLinkWidth` / `nvmlDeviceGetMaxPcieLinkWidth` (`Link Width` in `nvidia-smi -q`), the replays from `nvmlDeviceGetPcieReplayCounter` (`Replays Since Reset`).",
    more_fix="`nvidia-smi -q -d PCI`; ask the admin to reseat the GPU or its riser.",
)


GPU_NVLINK_DEGRADED = FindingKind(
    id="gpu-nvlink-degraded",
    severity=Severity.WARN,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md), [`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi` / `nvidia-smi -q`), `nvidia-smi nvlink -s` / `-e`",
    summary="Some of a GPU's NVLinks are down while others are up, every link is down on a GPU sold only as an SXM / HGX module (always NVLink-connected: `SXM`, `HBM3`, H200, B200, GB200 in its name; a PCIe card without a bridge reports its links down too and is not judged), or a link counted recovery errors (it went down and was retrained).",
    evidence="Per GPU: the links down and the links with recovery errors (and their counts).",
    more_why="With a link down NCCL sends that GPU's traffic over fewer links (or PCIe), so all-reduce slows for every rank; a link that needed recovery stalled its traffic and may fail outright (Xid 74).",
    more_fix="""```sh
nvidia-smi nvlink -s
nvidia-smi nvlink -e
```

Then ask the admin to reset the GPUs or inspect the NVLink bridge / NVSwitch.""",
)


GPU_PERSISTENCE_OFF = FindingKind(
    id="gpu-persistence-off",
    severity=Severity.INFO,
    area=AREA,
    emitted_by=EMITTED_BY,
    summary="Persistence mode is disabled on a GPU.",
    evidence="Per GPU: its persistence mode.",
    more_why="Without persistence mode (or nvidia-persistenced) the driver tears a GPU's state down whenever no process uses it, so each job start initialises it again (seconds per GPU) and ranks start unevenly.",
    more_fix="`sudo nvidia-smi -pm 1`, or run `nvidia-persistenced` (ask the admin).",
)


GPU_HEALTH_OK = FindingKind(
    id="gpu-health-ok",
    severity=Severity.OK,
    area=AREA,
    emitted_by="[`gpudoctor check`](../commands/check.md)",
    summary="NVML shows no uncorrectable memory errors, no pending page retirement or row remap, no hardware slowdown, no hot GPU, no lowered power limit, no narrow PCIe link and no NVLink down.",
    evidence="Per GPU: ECC mode and uncorrectable count, temperature, PCIe generation and width, active clock event reasons.",
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
    why="The NVIDIA driver writes GPU faults (Xid) to the kernel log; on many systems only root or the adm / systemd-journal groups may read it.",
    fix="sudo dmesg | grep -i xid  # or ask the admin to add you to the adm group",
)


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
not this finding; `ERR!` in a field of nvidia-smi's table is a reading that failed,
[gpu-reading-failed](gpu-reading-failed.md).""",
    evidence="Per GPU: NVML's index and its error (`check`), or what nvidia-smi said (`diagnose`); `GPUs NVML counts`; `nvidia-smi`: its *No devices were found* line.",
    why="The driver lost the GPU (it fell off the bus, Xid 79, or its firmware stopped answering): no process can use it until it is reset or the node rebooted, and a job with a rank on it hangs or dies.",
    fix="sudo dmesg | grep -i xid  # then drain the node and reboot it; if it recurs, ask the admin to reseat or replace the GPU",
)


GPU_READING_FAILED = FindingKind(
    id="gpu-reading-failed",
    severity=Severity.INFO,
    when="warn when every reading of the GPU failed",
    area=AREA,
    emitted_by="[`gpudoctor diagnose`](../commands/diagnose.md) (a pasted `nvidia-smi`)",
    summary="""The `nvidia-smi` table shows `ERR!` in a reading of a GPU it reached (fan, temperature,
performance state, power draw or cap). One failed field is a sensor or a passing read failure,
not a lost GPU; `ERR!` in the temperature, performance state and power draw together is a GPU
that answers nothing, which may be lost: `nvidia-smi -q` and the kernel log decide.""",
    evidence="`ERR!`: the readings that failed.",
    why={
        "some": "nvidia-smi could not take this reading, but the GPU answered for the rest of its row: a sensor or a passing read failure, not a lost GPU.",
        "every": "Every reading of this GPU failed, though nvidia-smi still holds it: it may have fallen off the bus. nvidia-smi -q and the kernel log (Xid 79) decide whether it is lost.",
    },
    fix="nvidia-smi -q -i {index}; sudo dmesg | grep -i xid  # 'Unable to determine the device handle' or Xid 79 there: the GPU is lost; readings back: it was a passing failure",
)
