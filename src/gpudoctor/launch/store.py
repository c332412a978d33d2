"""The rendezvous store of a local run, on 127.0.0.1 only.

torch's TCPStore server binds its port on every interface (`*:PORT`, whatever
MASTER_ADDR says), so while `allreduce`, `train-smoke` or `run --nproc` ran,
another host could set keys in it. Here the supervisor binds the port itself,
on 127.0.0.1, and hands the listening socket to rank 0 (GPUDOCTOR_STORE_FD);
rank 0 hosts the store on that very socket (TCPStore's `master_listen_fd`) and
every rank, rank 0 included, reaches it as a client, as under torchrun's agent
(TORCHELASTIC_USE_AGENT_STORE=True makes a plain `init_process_group()` do so).
The port is held from the moment it is chosen, so nothing can take it in between.
gloo listens on the loopback interface too (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME):
a local run needs no other.
"""

from __future__ import annotations

import os
import random
import socket
import sys
from typing import Any

from gpudoctor.launch import rundir

STORE_FD_ENV = rundir.STORE_FD_ENV
LOOPBACK = "127.0.0.1"
FIXED_PORTS_FROM = 20000  # well above the registered services most hosts run
TORCH_DEFAULT_PORTS = range(29400, 29600)  # torchrun's and c10d's defaults (29500, 29400): a user's job may want them

_hosted: Any = None  # the TCPStore rank 0 hosts, kept for the life of the process


def listen_loopback() -> socket.socket:
    """A listening TCP socket on 127.0.0.1, on a port below the kernel's ephemeral
    range (so no outgoing connection is handed it meanwhile) and outside torch's
    defaults; the kernel's choice when none is free."""
    low = _ephemeral_low()
    pool = [p for p in range(FIXED_PORTS_FROM, low) if p not in TORCH_DEFAULT_PORTS]
    for port in [*random.sample(pool, min(64, len(pool))), 0]:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((LOOPBACK, port))
            sock.listen(1024)
        except OSError:
            sock.close()
            continue
        return sock
    raise OSError(f"no free TCP port on {LOOPBACK}")


def free_port() -> int:
    """For a command that hosts its store itself (torch binds every interface, IPv4
    and IPv6): a port free on all of them now, tested as it will be bound."""
    for _ in range(64):
        with listen_loopback() as held:
            port = held.getsockname()[1]
        if _free_everywhere(port):
            return port
    raise OSError("no TCP port free on every interface")


def _free_everywhere(port: int) -> bool:
    for family, host in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue  # no IPv6 here
        with sock:
            try:
                sock.bind((host, port))
            except OSError:
                return False
    return True


def _ephemeral_low() -> int:
    """The first port of the kernel's ephemeral range (Linux; IANA's 49152 elsewhere)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as fh:
            return int(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 49152


def loopback_interface() -> str:
    """The name of the interface that holds 127.0.0.1 ('lo' on Linux, 'lo0' on macOS)."""
    try:
        import psutil

        for name, addrs in psutil.net_if_addrs().items():
            if any(a.family == socket.AF_INET and a.address == LOOPBACK for a in addrs):
                return name
    except Exception:  # noqa: BLE001 - no psutil answer: Linux's name
        pass
    return "lo0" if sys.platform == "darwin" else "lo"


def rank_env() -> dict[str, str]:
    """What every rank of a local run is given for the rendezvous and gloo."""
    iface = loopback_interface()
    return {
        "MASTER_ADDR": LOOPBACK,
        "TORCHELASTIC_USE_AGENT_STORE": "True",  # every rank a client of the store rank 0 hosts
        "GLOO_SOCKET_IFNAME": iface,
        "NCCL_SOCKET_IFNAME": iface,
    }


def host_if_asked() -> None:
    """In rank 0 of a local run, once torch can be imported: host the store on the
    socket the supervisor bound. Once per process; never raises (a rank that
    cannot host it fails in init_process_group, as it would have without us)."""
    global _hosted
    text = os.environ.pop(STORE_FD_ENV, "")  # popped: a child process of this rank hosts nothing
    if _hosted is not None or not text.isdigit():
        return
    fd = int(text)
    try:
        from datetime import timedelta

        from torch.distributed import TCPStore

        port = int(os.environ["MASTER_PORT"])
        world = int(os.environ.get("WORLD_SIZE", "1"))
        options: dict[str, Any] = {"is_master": True, "timeout": timedelta(seconds=300), "wait_for_workers": False}
        try:
            _hosted = TCPStore(LOOPBACK, port, world, master_listen_fd=fd, **options)
        except TypeError:  # a torch before master_listen_fd: its own bind, on every interface
            os.close(fd)
            _hosted = TCPStore(LOOPBACK, port, world, **options)
    except Exception as exc:  # noqa: BLE001
        print(f"gpudoctor: the rendezvous store could not be hosted on {LOOPBACK}: {exc}", file=sys.stderr)
