"""The nodes of a torchrun/SLURM job, gathered at rank 0 over the job's own
process group: every rank says which node it is on, local rank 0 of each node
probes that node, and rank 0 receives it all (gloo gather_object; a gloo group
of its own when the job's default backend is NCCL). What crosses between the
ranks is a frozen RankNode through the one codec (core/codec.py encode/decode), as JSON text.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from gpudoctor.checks.fleet import check_fleet
from gpudoctor.core.findings import Finding
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.launch.rank import RankContext
from gpudoctor.core import codec
from gpudoctor.probe.facts import Facts
from gpudoctor.probe.host import probe_host
from gpudoctor.checks.node import NodeFacts, distinct_names, node_facts, node_rank_of

DEFAULT_TIMEOUT_S = 180.0  # the torch probe alone may take 90 s on a many-GPU node


@dataclass(frozen=True)
class RankNode:
    """What one rank sends: where it runs, and (local rank 0 only) its node's facts."""

    rank: int
    node: str  # the node's name: its hostname, or GPUDOCTOR_NODE_NAME in tests
    node_rank: int | None  # torchrun's GROUP_RANK or SLURM_NODEID
    facts: Facts | None


@dataclass(frozen=True)
class GatheredNode:
    """One node of the job at rank 0: its facts and the global ranks on it."""

    facts: Facts
    ranks: tuple[int, ...]


def node_addresses(facts: Facts) -> tuple[str, ...]:
    """The node's own addresses (loopback left out: every node has 127.0.0.1)."""
    interfaces = facts.system.interfaces
    if isinstance(interfaces, Unavailable):
        return ()
    return tuple(a.split("%")[0] for i in interfaces for a in i.addresses if not a.startswith(("127.", "::1")))


def joinable(ctx: RankContext | None, environ: dict[str, str] | None = None) -> bool:
    """Whether this process is one rank of a multi-rank job it can rendezvous with.
    torchrun always says where to meet; under SLURM or a bare RANK/WORLD_SIZE
    MASTER_ADDR and MASTER_PORT must be set (by the batch script, or for an srun
    step by read_join_env, launch/slurm_env.py), and only `srun` steps count (a
    batch script's own shell also carries SLURM_PROCID=0)."""
    env = os.environ if environ is None else environ
    if ctx is None or ctx.world_size < 2 or ctx.joined_by == "gpudoctor":
        return False
    if ctx.joined_by == "torchrun":
        return True
    meeting = bool(env.get("MASTER_ADDR")) and bool(env.get("MASTER_PORT"))
    if ctx.joined_by == "slurm":
        return meeting and ("SLURM_STEP_ID" in env or "SLURM_STEPID" in env)
    return meeting


def one_node(ctx: RankContext, environ: dict[str, str] | None = None) -> bool:
    """Whether every rank of the job is known to run on this node (then there is
    nothing to compare). Only what the launcher says counts: torchrun's
    LOCAL_WORLD_SIZE or GROUP_WORLD_SIZE, SLURM's node count; when in doubt, compare."""
    env = os.environ if environ is None else environ
    if env.get("GROUP_WORLD_SIZE") == "1" or env.get("SLURM_NNODES") == "1" or env.get("SLURM_JOB_NUM_NODES") == "1":
        return True
    return env.get("LOCAL_WORLD_SIZE") == str(ctx.world_size)


def encode(report: RankNode) -> str:
    return json.dumps(codec.encode(report))


def decode(text: str) -> RankNode:
    """SnapshotError when the rank runs another gpudoctor (its schema) or sent something else."""
    return codec.decode(RankNode, json.loads(text), "rank")


def group_by_node(reports: list[RankNode]) -> list[GatheredNode]:
    """Ranks grouped by (node name, node rank), in order of their lowest rank;
    a node whose facts did not arrive is left out."""
    ranks: dict[tuple[str, int | None], list[int]] = {}
    facts: dict[tuple[str, int | None], Facts] = {}
    for r in sorted(reports, key=lambda r: r.rank):
        key = (r.node, r.node_rank)
        ranks.setdefault(key, []).append(r.rank)
        if r.facts is not None and key not in facts:
            facts[key] = r.facts
    return [GatheredNode(facts[key], tuple(rs)) for key, rs in ranks.items() if key in facts]


class Probing:
    """probe() in a thread; result() waits for it (probes never raise). Not a
    daemon: a process that gives up on its peers still waits for the probe's
    own bounded torch child to finish, rather than leave it orphaned."""

    def __init__(self, probe: Callable[[], Facts]) -> None:
        self._got: list[Facts] = []
        self._thread = threading.Thread(target=lambda: self._got.append(probe()), name="gpudoctor-probe")
        self._thread.start()

    def result(self, timeout_s: float) -> Facts | None:
        self._thread.join(timeout_s)
        return self._got[0] if self._got else None


def gather_nodes(
    ctx: RankContext, probe: Callable[[], Facts], timeout_s: float = DEFAULT_TIMEOUT_S
) -> list[GatheredNode] | None:
    """Every node's facts at rank 0 (None on the other ranks), over a gloo
    process group set up for it and torn down after. Raises what
    torch.distributed raises when the ranks cannot meet in time."""
    # Local rank 0 probes its node while the ranks meet: both take seconds.
    return _gather(ctx, Probing(probe) if ctx.local_rank == 0 else None, timeout_s)


def _gather(ctx: RankContext, probing: Probing | None, timeout_s: float) -> list[GatheredNode] | None:
    import datetime

    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=timeout_s)
    # In a job whose process group is up (allreduce, train-smoke), a gloo group of
    # our own over it: a second init of the default group could read the first
    # one's addresses from the store, and NCCL cannot gather Python objects on CPU.
    own = not dist.is_initialized()
    if own:
        from gpudoctor.launch.rendezvous import meet

        # Checked in first: peers that never come are named (RendezvousIncomplete), not waited on in silence.
        store = meet(ctx.rank, ctx.world_size, timeout_s, ctx.joined_by, ctx.on_rendezvous_wait)
        dist.init_process_group("gloo", store=store, rank=ctx.rank, world_size=ctx.world_size, timeout=timeout)
    try:
        group = None if dist.get_backend() == "gloo" else dist.new_group(backend="gloo", timeout=timeout)
        facts = probing.result(timeout_s) if probing is not None else None
        mine = RankNode(ctx.rank, probe_host().name, node_rank_of(dict(os.environ)), facts)
        received: list | None = [None] * ctx.world_size if ctx.rank == 0 else None
        dist.gather_object(encode(mine), received, dst=0, group=group)
    finally:
        if own:
            dist.destroy_process_group()
    if received is None:
        return None
    return group_by_node([decode(text) for text in received])


@dataclass(frozen=True)
class FleetComparison:
    """At rank 0 of a multi-node job: the nodes, and what differs between them
    (one OK finding when nothing does). What `allreduce` and `train-smoke` show
    first in join mode, so that a failed collective is read beside its cause."""

    nodes: tuple[NodeFacts, ...]
    findings: tuple[Finding, ...]
    # every address a node's interfaces carry -> that node: a peer's address in a
    # transport error (gloo's "Connection closed by peer [10.0.0.2]:..." ) becomes its node
    addresses: tuple[tuple[str, NodeFacts], ...] = ()


class JobComparison:
    """The nodes of a joined job (allreduce, train-smoke) compared right after
    the job's own rendezvous, over its process group: local rank 0 starts
    probing its node at once, `after_join` gathers at rank 0, and `result` is
    the comparison there (None on other ranks, on a single node, or when the
    gather failed: the job's own collectives then say why, as findings)."""

    def __init__(self, ctx: RankContext, timeout_s: float = DEFAULT_TIMEOUT_S, probe: Callable[[], Facts] | None = None):
        from gpudoctor.probe.facts import collect

        self.ctx = ctx
        self.timeout_s = timeout_s
        self.pending = not one_node(ctx)
        self.probing = Probing(probe or collect) if self.pending and ctx.local_rank == 0 else None
        self.result: FleetComparison | None = None

    def after_join(self) -> None:
        if not self.pending:
            return
        self.pending = False
        try:
            gathered = _gather(self.ctx, self.probing, self.timeout_s)
        except Exception:  # noqa: BLE001 - the job's own collectives report a broken group, as findings
            return
        if gathered:
            nodes = distinct_names([node_facts(n.facts, None, n.ranks) for n in gathered])
            addresses = tuple((address, node) for n, node in zip(gathered, nodes) for address in node_addresses(n.facts))
            self.result = FleetComparison(tuple(nodes), tuple(check_fleet(nodes)), addresses)
