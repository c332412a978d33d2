"""Meeting the other ranks of a torchrun/SLURM/env:// job, with a word while
waiting and a finding when they do not all come.

torch's env:// rendezvous waits silently for its whole timeout and then raises
a generic timeout. Here each rank first checks in on the same TCPStore
(MASTER_ADDR:MASTER_PORT, hosted as torch would: by rank 0, or by torchrun's
agent) and rank 0 counts them, so it can say how many came, which are missing,
and stop at the deadline; the store is then handed to init_process_group.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpudoctor.catalog.findings.launch import RENDEZVOUS_INCOMPLETE, RENDEZVOUS_STORE_SILENT
from gpudoctor.core.findings import Finding

POLL_S = 0.2
CONNECT_GRACE_S = 10.0  # a client's connection shut at the deadline: how long its thread gets to end
KEY = "gpudoctor/checkin"


@dataclass(frozen=True)
class RendezvousWait:
    address: str  # host:port
    arrived: int
    world_size: int
    waited_s: float


WaitCallback = Callable[[RendezvousWait], None]


class RendezvousIncomplete(RuntimeError):
    """Rank 0 waited its whole timeout and not every rank checked in."""

    def __init__(self, address: str, world_size: int, joined: tuple[int, ...], waited_s: float, launcher: str):
        self.address, self.world_size, self.joined = address, world_size, joined
        self.waited_s, self.launcher = waited_s, launcher
        missing = self.missing
        super().__init__(f"{len(joined)} of {world_size} ranks joined at {address} within {waited_s:.0f} s; missing: {_ranks(missing)}")

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(r for r in range(self.world_size) if r not in self.joined)

    def finding(self) -> Finding:
        host, port = self.address.rsplit(":", 1)[0], self.address.rsplit(":", 1)[-1]
        evidence = {
            "address": self.address,
            "joined": list(self.joined),
            "missing": list(self.missing),
            "waited_s": round(self.waited_s, 1),
            "launched by": self.launcher,
        }
        return RENDEZVOUS_INCOMPLETE(evidence=evidence, joined=len(self.joined), world=self.world_size, address=self.address,
                                     waited=self.waited_s, missing=_ranks(self.missing), host=host, port=port)


class StoreNotAnswering(RuntimeError):
    """A rank joining as a client waited its whole timeout at MASTER_ADDR:MASTER_PORT
    without a store answering: something accepted the connection and said nothing
    (another program on the port), or nothing listens there at all."""

    def __init__(self, address: str, waited_s: float, answered: bool):
        self.address, self.waited_s, self.answered = address, waited_s, answered
        if answered:
            said = f"something else answers on port {_port(address)}: it accepts connections but is not the job's TCPStore"
        else:
            said = f"nothing answers on port {_port(address)}"
        super().__init__(f"no rendezvous store at {address} within {waited_s:.0f} s: {said}")

    def finding(self) -> Finding:
        host, port = self.address.rsplit(":", 1)[0], _port(self.address)
        evidence = {"address": self.address, "waited_s": round(self.waited_s, 1), "port accepts connections": self.answered}
        return RENDEZVOUS_STORE_SILENT(evidence=evidence, message=str(self), host=host, port=port)


def _port(address: str) -> str:
    return address.rsplit(":", 1)[-1]


def _accepts(host: str, port: int) -> bool:
    import socket

    try:
        with socket.create_connection((host, port), timeout=2.0):
            return True
    except OSError:
        return False


def _check_in_as_client(host: str, port: int, world_size: int, timeout_s: float, prefix: str, rank: int):
    """The store at host:port, this rank checked in, within `timeout_s` whatever
    answers there. torch's TCPStore client waits without end in its handshake when
    the port is held by something that accepts and stays silent (a port clash): the
    connection runs in a thread of its own (torch lets go of the GIL while it
    waits), and a thread still waiting at the deadline is left behind, a daemon."""
    import threading
    from datetime import timedelta

    from torch.distributed import TCPStore

    box: dict = {}

    def connect() -> None:
        try:
            store = TCPStore(host, port, world_size, is_master=False, timeout=timedelta(seconds=timeout_s), wait_for_workers=False)
            store.set(f"{prefix}/rank{rank}", "1")
            box["arrived"] = store.add(f"{prefix}/count", 1)
            box["store"] = store
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread as it is
            box["error"] = exc

    start = time.monotonic()
    thread = threading.Thread(target=connect, name="gpudoctor-rendezvous", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        # Still in the handshake: end its wait by shutting its connection down (the thread
        # then fails and ends; one left in torch's C++ at exit would abort the process).
        # torch retries a failed handshake until its own timeout, which has passed: again
        # until it gives up.
        give_up = time.monotonic() + CONNECT_GRACE_S
        while thread.is_alive() and time.monotonic() < give_up:
            _shut_connections_to(host, port)
            thread.join(0.2)
        if "store" not in box:
            raise StoreNotAnswering(f"{host}:{port}", time.monotonic() - start, _accepts(host, port))
    if "error" in box:
        raise box["error"]
    return box["store"], box["arrived"]


def _shut_connections_to(host: str, port: int) -> None:
    """shutdown() every socket of this process connected to host:port (Linux: found
    through /proc/self/fd); a blocked recv() on one then returns at once."""
    import socket

    try:
        fds = [int(fd) for fd in os.listdir("/proc/self/fd")]
        wanted = {str(info[4][0]).removeprefix("::ffff:") for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)}
    except (OSError, ValueError):
        return
    for fd in fds:
        try:
            sock = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            peer = sock.getpeername()
            if isinstance(peer, tuple) and peer[1] == port and peer[0].removeprefix("::ffff:") in wanted:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        finally:
            sock.close()


def _ranks(ranks: tuple[int, ...]) -> str:
    shown = ", ".join(str(r) for r in ranks[:8]) + (" …" if len(ranks) > 8 else "")
    return f"rank{'s' if len(ranks) != 1 else ''} {shown}"


def meet(rank: int, world_size: int, timeout_s: float, launcher: str, on_wait: WaitCallback | None = None):
    """Check in at MASTER_ADDR:MASTER_PORT and return the store for
    init_process_group(store=...). Rank 0 waits for every rank, reporting
    through `on_wait`, and raises RendezvousIncomplete at the deadline."""
    from datetime import timedelta

    from torch.distributed import TCPStore

    host, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    address = f"{host}:{port}"
    # Hosted as torch's env:// does it: by torchrun's agent, else by rank 0.
    agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"
    start = time.monotonic()
    prefix = f"{KEY}/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"
    if rank == 0 and not agent:  # hosting it: nothing to wait on but the peers, counted below
        store = TCPStore(host, port, world_size, is_master=True, timeout=timedelta(seconds=timeout_s), wait_for_workers=False)
        store.set(f"{prefix}/rank{rank}", "1")
        arrived = store.add(f"{prefix}/count", 1)
    else:
        store, arrived = _check_in_as_client(host, port, world_size, timeout_s, prefix, rank)
    if rank != 0:
        return store
    while arrived < world_size:
        waited = time.monotonic() - start
        if waited > timeout_s:
            joined = tuple(r for r in range(world_size) if store.check([f"{prefix}/rank{r}"]))
            raise RendezvousIncomplete(address, world_size, joined, waited, launcher)
        if on_wait:
            on_wait(RendezvousWait(address, arrived, world_size, waited))
        time.sleep(POLL_S)
        arrived = store.add(f"{prefix}/count", 0)
    return store
