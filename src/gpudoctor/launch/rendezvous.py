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

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.catalog import fix, why

POLL_S = 0.2
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
        return Finding(
            id="rendezvous-incomplete",
            severity=Severity.ERROR,
            title=f"only {len(self.joined)} of {self.world_size} ranks came to {self.address} within "
            f"{self.waited_s:.0f} s: {_ranks(self.missing)} missing",
            evidence={
                "address": self.address,
                "joined": list(self.joined),
                "missing": list(self.missing),
                "waited_s": round(self.waited_s, 1),
                "launched by": self.launcher,
            },
            why=why("rendezvous-incomplete"),
            fix=fix("rendezvous-incomplete", address=self.address, host=host, port=port),
            area="launch",
        )


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
    store = TCPStore(
        host, port, world_size, is_master=rank == 0 and not agent, timeout=timedelta(seconds=timeout_s), wait_for_workers=False
    )
    prefix = f"{KEY}/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}"
    store.set(f"{prefix}/rank{rank}", "1")
    arrived = store.add(f"{prefix}/count", 1)
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
