"""Which machine this is, for comparing the nodes of a job: its name and its
InfiniBand/RoCE devices (from /sys/class/infiniband, where the kernel lists
them whether or not any user-space verbs library is installed)."""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpudoctor.core.unavailable import Unavailable, describe_error

INFINIBAND_ROOT = Path("/sys/class/infiniband")
# For tests only: every process on one machine has the same hostname, so a test
# that starts two "nodes" there names them with this variable. Real jobs leave it unset.
NODE_NAME_ENV = "GPUDOCTOR_NODE_NAME"


@dataclass(frozen=True)
class InfinibandPort:
    number: int
    state: str | Unavailable  # "ACTIVE", "DOWN", "INIT", ... (the kernel's "4: ACTIVE" without the code)
    link_layer: str | Unavailable  # "InfiniBand", or "Ethernet" for RoCE
    rate: str | Unavailable  # "400 Gb/sec (4X NDR)"


@dataclass(frozen=True)
class InfinibandDevice:
    name: str  # "mlx5_0"
    ports: tuple[InfinibandPort, ...]

    @property
    def active(self) -> bool:
        return any(p.state == "ACTIVE" for p in self.ports)


@dataclass(frozen=True)
class HostFacts:
    hostname: str | Unavailable
    name: str  # how reports name this node: the hostname, or GPUDOCTOR_NODE_NAME (tests)
    infiniband: tuple[InfinibandDevice, ...] | Unavailable  # () when the machine has none


def _read(path: Path) -> str | Unavailable:
    try:
        return path.read_text(errors="replace").strip()
    except OSError as exc:
        return Unavailable(f"{path}: {describe_error(exc)}")


def _port(path: Path) -> InfinibandPort:
    state = _read(path / "state")
    if isinstance(state, str):
        state = state.partition(":")[2].strip() or state  # "4: ACTIVE" -> "ACTIVE"
    return InfinibandPort(
        number=int(path.name) if path.name.isdigit() else -1,
        state=state,
        link_layer=_read(path / "link_layer"),
        rate=_read(path / "rate"),
    )


def probe_infiniband(root: Path = INFINIBAND_ROOT) -> tuple[InfinibandDevice, ...] | Unavailable:
    """The RDMA devices the kernel lists; () when there are none (no such directory)."""
    try:
        if not root.is_dir():
            return ()
        devices = []
        for dev in sorted(root.iterdir()):
            ports_dir = dev / "ports"
            ports = sorted(ports_dir.iterdir(), key=lambda p: p.name) if ports_dir.is_dir() else []
            devices.append(InfinibandDevice(name=dev.name, ports=tuple(_port(p) for p in ports)))
        return tuple(devices)
    except OSError as exc:
        return Unavailable(f"{root}: {describe_error(exc)}")


def probe_host(environ: Mapping[str, str] | None = None, infiniband_root: Path = INFINIBAND_ROOT) -> HostFacts:
    env = os.environ if environ is None else environ
    try:
        hostname: str | Unavailable = socket.gethostname()
    except OSError as exc:
        hostname = Unavailable(describe_error(exc))
    override = env.get(NODE_NAME_ENV, "").strip()
    name = override or (hostname if isinstance(hostname, str) and hostname else "unknown-host")
    return HostFacts(hostname=hostname, name=name, infiniband=probe_infiniband(infiniband_root))
