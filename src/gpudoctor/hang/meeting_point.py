"""Where the ranks of a rendezvous that never completed went to meet, and who holds
that port: the address each rank left in the run folder, and the process listening
there when it is not one of the job's ranks (rendezvous-port-held)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gpudoctor.catalog.findings.ranks import RENDEZVOUS_HANG, RENDEZVOUS_PORT_HELD
from gpudoctor.core.findings import Finding
from gpudoctor.launch.rundir import read_rendezvous


def named_meeting_point(result, found: list) -> list:
    """A rendezvous that never completed (rendezvous-hang): the address the ranks went
    to (each left it in the run folder) and, when a process that is not one of the
    job's ranks listens there, that process (rendezvous-port-held)."""
    from gpudoctor.probe.ports import port_holders

    if not any(f.id == "rendezvous-hang" for f in found):
        return found
    points = {a for a in (read_rendezvous(result.run_dir, o.rank) for o in result.ranks) if a is not None}
    if len(points) != 1:
        return found
    host, port = next(iter(points))
    # The ranks are gone by now: whoever still listens on the port is not one of them.
    holders = port_holders(port)
    launcher = getattr(result, "store_port", 0)
    return [port_held(f, host, port, holders, launcher) if f.id == "rendezvous-hang" else f for f in found]


def port_held(stall: Finding, host: str, port: int, holders: Sequence, launcher_port: int = 0) -> Finding:
    """A rendezvous that never completed, with its meeting point: the process that
    holds the port when one is seen (probe/ports.PortHolder), else the address alone."""
    ev = {**stall.evidence, "meeting point": f"{host}:{port}"}
    if not holders:
        ev["listening there now"] = "nobody (the ranks are gone; no other process holds the port)"
        if launcher_port and port != launcher_port:
            # The script replaced the launcher's MASTER_PORT: under gpudoctor run --nproc (and torchrun)
            # the store is the launcher's, and no rank hosts one on the script's port.
            ev["launcher's MASTER_PORT"] = launcher_port
            # In the stall's area, as knowledge/collectives.py reports it.
            return replace(RENDEZVOUS_HANG(case="launcher-port", evidence=ev, port=port, launcher=launcher_port), area=stall.area)
        return replace(stall, evidence=ev)
    who = "; ".join(h.describe() for h in holders)
    ev["held by"] = who
    return RENDEZVOUS_PORT_HELD(evidence=ev, port=port, host=host, who=who)
