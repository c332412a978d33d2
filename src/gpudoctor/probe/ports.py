"""Who listens on a TCP port of this machine: the process that holds a rendezvous
port a job's ranks wait on. Never raises: what cannot be seen (another user's
process without the rights to see it, no psutil) is said as such."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PortHolder:
    """A process listening on the port, as far as this user can see it."""

    port: int
    address: str  # the address it is bound to ("127.0.0.1", "0.0.0.0", "::")
    pid: int | None  # None: the socket is there, its process is not visible to this user
    name: str = ""
    cmdline: str = ""

    def describe(self) -> str:
        """`pid 4242 (python3 holder.py 29500)`, or why it cannot be named."""
        if self.pid is None:
            return "a process gpudoctor cannot see (another user's; `sudo ss -ltnp` names it)"
        what = self.cmdline or self.name
        return f"pid {self.pid}" + (f" ({what[:120]})" if what else "")


def port_holders(port: int) -> tuple[PortHolder, ...]:
    """Every socket listening on TCP `port`, with its process when visible; () when
    none, or when the sockets cannot be read at all."""
    try:
        import psutil

        conns = psutil.net_connections(kind="tcp")
    except Exception:  # noqa: BLE001 - no psutil, no rights: nothing seen
        return ()
    out = []
    for c in conns:
        if c.status != "LISTEN" or not c.laddr or c.laddr.port != port:
            continue
        name = cmdline = ""
        if c.pid is not None:
            try:
                proc = psutil.Process(c.pid)
                name, cmdline = proc.name(), " ".join(proc.cmdline())
            except Exception:  # noqa: BLE001 - it left meanwhile, or is not ours to read
                pass
        out.append(PortHolder(port, str(c.laddr.ip), c.pid, name, cmdline))
    return tuple(out)
