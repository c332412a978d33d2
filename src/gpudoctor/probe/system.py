"""The host: CPUs, memory, /dev/shm, the open-files limit, network
interfaces, container hints, and the display adapters on the PCI bus
(from `lspci` where it exists, else from /sys/bus/pci)."""

from __future__ import annotations

import os
import platform
import shlex
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from gpudoctor.core.unavailable import Unavailable, describe_error

LSPCI_TIMEOUT_S = 5.0
# PCI vendor ids of display adapters one meets in servers, laptops and VMs.
VENDORS = {
    "10de": "NVIDIA Corporation",
    "8086": "Intel Corporation",
    "1002": "Advanced Micro Devices, Inc. [AMD/ATI]",
    "1a03": "ASPEED Technology, Inc.",
    "102b": "Matrox Electronics Systems Ltd.",
    "1af4": "Red Hat, Inc. (virtio)",
    "1234": "QEMU (Bochs display)",
    "15ad": "VMware",
    "1414": "Microsoft Corporation (Hyper-V)",
    "1013": "Cirrus Logic",
}


@dataclass(frozen=True)
class NetInterface:
    name: str
    up: bool | Unavailable
    addresses: tuple[str, ...]  # IPv4 and IPv6 addresses


@dataclass(frozen=True)
class DisplayDevice:
    slot: str  # PCI address, "0000:01:00.0"
    kind: str  # "VGA compatible controller", "3D controller", ...
    vendor: str
    name: str
    nvidia: bool


@dataclass(frozen=True)
class SystemFacts:
    platform: str
    python: str
    cpus_logical: int | Unavailable
    cpus_physical: int | Unavailable
    cpu_affinity: tuple[int, ...] | Unavailable
    ram_total_bytes: int | Unavailable
    ram_available_bytes: int | Unavailable
    shm_total_bytes: int | Unavailable
    shm_free_bytes: int | Unavailable
    open_files_soft: int | Unavailable  # -1: unlimited
    open_files_hard: int | Unavailable
    interfaces: tuple[NetInterface, ...] | Unavailable
    container: tuple[str, ...]  # the hints seen; () when none
    display_devices: tuple[DisplayDevice, ...] | Unavailable
    display_source: str  # "lspci", "sysfs", or "" when neither could be read


def _try(fn, what: str):
    try:
        return fn()
    except Exception as exc:  # a probe never raises: the reason is the value
        return Unavailable(f"{what}: {describe_error(exc)}")


def _affinity() -> tuple[int, ...] | Unavailable:
    import psutil

    proc = psutil.Process()
    if not hasattr(proc, "cpu_affinity"):
        return Unavailable("CPU affinity is not reported on this OS")
    return tuple(sorted(proc.cpu_affinity()))


def _open_files() -> tuple[int | Unavailable, int | Unavailable]:
    try:
        import resource
    except ImportError:
        reason = Unavailable("no resource module on this OS")
        return reason, reason
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    unlimited = resource.RLIM_INFINITY
    return (-1 if soft == unlimited else soft), (-1 if hard == unlimited else hard)


def _interfaces() -> tuple[NetInterface, ...]:
    import psutil

    stats = psutil.net_if_stats()
    out = []
    for name, addrs in sorted(psutil.net_if_addrs().items()):
        ips = tuple(
            a.address.split("%")[0]
            for a in addrs
            if a.family in (socket.AF_INET, socket.AF_INET6)
        )
        up = stats[name].isup if name in stats else Unavailable("no link status")
        out.append(NetInterface(name=name, up=up, addresses=ips))
    # Interfaces with no address (e.g. down) still exist for NCCL_SOCKET_IFNAME.
    for name in sorted(set(stats) - {i.name for i in out}):
        out.append(NetInterface(name=name, up=stats[name].isup, addresses=()))
    return tuple(out)


def _container_hints() -> tuple[str, ...]:
    hints = []
    for path in ("/.dockerenv", "/run/.containerenv"):
        if os.path.exists(path):
            hints.append(path)
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        hints.append("KUBERNETES_SERVICE_HOST is set")
    try:
        cgroup = Path("/proc/1/cgroup").read_text(errors="replace")
        for word in ("docker", "kubepods", "containerd", "lxc", "libpod"):
            if word in cgroup:
                hints.append(f"/proc/1/cgroup mentions {word}")
                break
    except OSError:
        pass
    return tuple(hints)


DISPLAY_KINDS = ("VGA compatible controller", "3D controller", "Display controller")


def _from_lspci(lspci: str) -> tuple[DisplayDevice, ...]:
    # -mm: machine-readable quoted fields; -D: full PCI address with domain; -n -n: names and ids.
    out = subprocess.run(
        [lspci, "-mm", "-D", "-nn"], capture_output=True, text=True, timeout=LSPCI_TIMEOUT_S, errors="replace"
    )
    if out.returncode != 0:
        raise OSError(f"lspci exited with {out.returncode}: {out.stderr.strip()[:200]}")
    devices = []
    for line in out.stdout.splitlines():
        try:
            fields = shlex.split(line)
        except ValueError:
            continue
        if len(fields) < 4:
            continue
        slot, kind, vendor, name = fields[0], fields[1], fields[2], fields[3]
        kind_name = kind.rsplit(" [", 1)[0]
        if kind_name not in DISPLAY_KINDS:
            continue
        devices.append(
            DisplayDevice(
                slot=slot,
                kind=kind_name,
                vendor=vendor.rsplit(" [", 1)[0],
                name=name.rsplit(" [", 1)[0],
                nvidia="[10de]" in vendor,
            )
        )
    return tuple(devices)


def _from_sysfs() -> tuple[DisplayDevice, ...]:
    devices = []
    kinds = {"00": "VGA compatible controller", "02": "3D controller", "80": "Display controller"}
    for dev in sorted(Path("/sys/bus/pci/devices").iterdir()):
        cls = (dev / "class").read_text().strip().lower().removeprefix("0x")
        if not cls.startswith("03"):  # PCI base class 0x03: display controller
            continue
        vendor = (dev / "vendor").read_text().strip().lower().removeprefix("0x")
        device = (dev / "device").read_text().strip().lower().removeprefix("0x")
        devices.append(
            DisplayDevice(
                slot=dev.name,
                kind=kinds.get(cls[2:4], "Display controller"),
                vendor=VENDORS.get(vendor, f"vendor {vendor}"),
                name=f"device {device}",
                nvidia=vendor == "10de",
            )
        )
    return tuple(devices)


def _display_devices() -> tuple[tuple[DisplayDevice, ...] | Unavailable, str]:
    lspci = shutil.which("lspci") or next(
        (p for p in ("/usr/bin/lspci", "/sbin/lspci", "/usr/sbin/lspci") if os.path.exists(p)), None
    )
    if lspci:
        got = _try(lambda: _from_lspci(lspci), "lspci")
        if not isinstance(got, Unavailable):
            return got, "lspci"
    if Path("/sys/bus/pci/devices").is_dir():
        got = _try(_from_sysfs, "reading /sys/bus/pci")
        if not isinstance(got, Unavailable):
            return got, "sysfs"
        return got, ""
    return Unavailable("no lspci and no /sys/bus/pci on this system"), ""


def shm_usage(platform: str = sys.platform):
    """/dev/shm's size and free space (shutil's usage tuple), or Unavailable.
    Linux only: macOS has no /dev/shm, and on Windows the path would name a
    folder on the current drive."""
    if not platform.startswith("linux"):
        return Unavailable(f"no /dev/shm on {platform}")
    return _try(lambda: shutil.disk_usage("/dev/shm"), "/dev/shm")


def shm_total_bytes() -> int | None:
    """/dev/shm's size in bytes, or None where it cannot be read."""
    shm = shm_usage()
    return None if isinstance(shm, Unavailable) else int(shm.total)


def probe_system() -> SystemFacts:
    import psutil

    shm = shm_usage()
    mem = _try(psutil.virtual_memory, "memory")
    limits = _try(_open_files, "open-files limit")
    open_soft, open_hard = (limits, limits) if isinstance(limits, Unavailable) else limits
    displays, source = _display_devices()
    return SystemFacts(
        platform=platform.platform(),
        python=sys.version.split()[0],
        cpus_logical=_try(lambda: psutil.cpu_count(logical=True) or Unavailable("not reported"), "CPU count"),
        cpus_physical=_try(lambda: psutil.cpu_count(logical=False) or Unavailable("not reported"), "CPU count"),
        cpu_affinity=_try(_affinity, "CPU affinity"),
        ram_total_bytes=mem if isinstance(mem, Unavailable) else int(mem.total),
        ram_available_bytes=mem if isinstance(mem, Unavailable) else int(mem.available),
        shm_total_bytes=shm if isinstance(shm, Unavailable) else int(shm.total),
        shm_free_bytes=shm if isinstance(shm, Unavailable) else int(shm.free),
        open_files_soft=open_soft,
        open_files_hard=open_hard,
        interfaces=_try(_interfaces, "network interfaces"),
        container=_container_hints(),
        display_devices=displays,
        display_source=source,
    )
