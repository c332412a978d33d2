"""Per-node figures of `gpudoctor allreduce` across nodes (issue 36): each node's
intra-node bus bandwidth beside its inter-node bandwidth, measured in the same run,
and which node is below the others.

After the sweep, when the ranks span two hosts or more:
- intra-node: the ranks of each node all-reduce among themselves (a sub-group per
  node; every node at once, as their links are their own);
- inter-node: one rank per node (its lowest, the node's leader) sends the same
  buffer to each other node's leader in turn, a round-robin of disjoint node pairs
  (bisect.pair_rounds), each direction timed on the sender up to the receiver's
  one-element reply. A direction, not a pair: a NIC shaped or degraded on its way
  out slows what its node sends and not what it receives, and with two nodes that
  is the only way to tell which end is slow.
Everything is timed twice (bisect.PASSES), so each figure has its repeat.

The verdict (`node_findings`) is pure and judges like with like as `--bisect`
does (bisect.PairKind, issue 34): the nodes' sends against each other, by what they
took in both passes, against the run's noise floor (how far the two passes
disagree) and a stated margin beyond it. The rank side is `measure_nodes`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from gpudoctor.catalog.findings.allreduce import ALLREDUCE_SLOW_NODE
from gpudoctor.commands.allreduce.bandwidth import algbw_gbps, busbw_gbps, format_size
from gpudoctor.commands.allreduce.bisect import BISECT_ITERS, PASSES, SLOW_FACTOR, PairKind, PairTime, group_time, noise, pair_rounds
from gpudoctor.core.findings import Finding, Severity

SENDS = "inter-node sends"
RECEIVES = "inter-node receives"
INTRA = "intra-node"
INTER = "inter-node"


@dataclass(frozen=True)
class NodeTimes:
    """One node: its ranks and the median intra-node all-reduce time (the slowest of its
    ranks), in the first pass and the repeat; 0 where the node has one rank."""

    host: str
    ranks: tuple[int, ...]
    intra_us: float = 0.0
    intra_repeat_us: float = 0.0


@dataclass(frozen=True)
class PerNode:
    """What the ranks measured across nodes (rank 0's copy). `sends`: one per direction,
    a = the sending node's leader, b = the receiving one's, us/repeat_us its best send
    (`_send_us`) in each pass."""

    nbytes: int
    nodes: tuple[NodeTimes, ...]
    sends: tuple[PairTime, ...]

    def leader(self, node: NodeTimes) -> int:
        return node.ranks[0]

    def node_of(self, rank: int) -> NodeTimes:
        return next(n for n in self.nodes if rank in n.ranks)


def hosts_in_order(hosts: list[str]) -> list[str]:
    """The nodes, in the order of their lowest rank."""
    return list(dict.fromkeys(hosts))


# ---- the rank side (torch; inside run_rank, after the sweep)


def measure_nodes(torch, dist, rank: int, hosts: list[str], device, dtype, nbytes: int) -> PerNode | None:
    """Every rank calls this with every rank's host (group creation is collective);
    None on one node (nothing is measured) and on ranks other than 0."""
    nodes = hosts_in_order(hosts)
    if len(nodes) < 2:
        return None
    members = {n: tuple(r for r, h in enumerate(hosts) if h == n) for n in nodes}
    groups = {n: dist.new_group(list(ranks)) for n, ranks in members.items() if len(ranks) > 1}  # same order everywhere
    leaders = [members[n][0] for n in nodes]
    count = max(1, nbytes // torch.tensor([], dtype=dtype).element_size())
    buf = torch.ones(count, dtype=dtype, device=device)
    ack = torch.zeros(1, dtype=dtype, device=device)
    directions = _directions(pair_rounds(len(nodes)))
    mine: list[float] = []  # the same slots on every rank: 0.0 where it timed nothing
    for _ in range(PASSES):
        dist.barrier()  # every node's intra-node all-reduce starts together
        group = groups.get(hosts[rank])
        mine.append(group_time(torch, dist, group, buf, device) if group is not None else 0.0)
        for round_ in directions:
            for a, b in round_:  # node indices: a sends to b
                src, dst = leaders[a], leaders[b]
                mine.append(_send_us(torch, dist, buf, ack, dst, device) if rank == src else 0.0)
                if rank == dst:
                    _receive(dist, buf, ack, src)
            dist.barrier()  # the next round's pairs start together
    everyone = [torch.zeros(len(mine), dtype=torch.float64, device=device) for _ in hosts]
    dist.all_gather(everyone, torch.tensor(mine, dtype=torch.float64, device=device))
    if rank != 0:
        return None
    return _assemble([t.tolist() for t in everyone], nodes, members, directions, nbytes)


def _directions(rounds: list[list[tuple[int, int]]]) -> list[list[tuple[int, int]]]:
    """Each round of node pairs as its directions: a pair's two run one after the other,
    the round's pairs side by side."""
    return [[d for a, b in pairs for d in ((a, b), (b, a))] for pairs in rounds]


def _assemble(times: list[list[float]], nodes: list[str], members: dict[str, tuple[int, ...]], directions, nbytes: int) -> PerNode:
    """Rank 0's view from every rank's slots: a node's intra-node time is its slowest
    rank's; a direction's time is its sender's."""
    per_pass = 1 + sum(len(r) for r in directions)
    passes = [[row[p * per_pass : (p + 1) * per_pass] for row in times] for p in range(PASSES)]
    first, again = passes[0], passes[-1] if PASSES > 1 else None
    node_times = []
    for n in nodes:
        ranks = members[n]
        intra = [max(mine[0] for r, mine in enumerate(pass_) if r in ranks) for pass_ in (first, again or first)]
        node_times.append(NodeTimes(n, ranks, round(intra[0], 1), round(intra[1], 1) if again else 0.0))
    sends = []
    slot = 1
    for round_ in directions:
        for a, b in round_:
            src, dst = members[nodes[a]][0], members[nodes[b]][0]
            us = first[src][slot]
            repeat = again[src][slot] if again else 0.0
            sends.append(PairTime(src, dst, round(us, 1), round(repeat, 1)))
            slot += 1
    return PerNode(nbytes, tuple(node_times), tuple(sends))


def _send_us(torch, dist, buf, ack, peer: int, device) -> float:
    """The best of BISECT_ITERS sends to `peer`, each up to its one-element reply. The
    best, not the median: a busy host only adds time to a send (a rank descheduled while
    its peer waits), and on two cores it can do so to most sends of one direction in both
    passes (a CI control once read 1.8 ms against 0.16 ms the other way); a slow or shaped
    NIC slows every send, the best one too."""
    times = []
    for i in range(BISECT_ITERS + 1):  # the first is the warm-up: the pair's connection
        start = time.perf_counter()
        dist.send(buf, dst=peer)
        dist.recv(ack, src=peer)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if i:
            times.append((time.perf_counter() - start) * 1e6)
    return min(times)


def _receive(dist, buf, ack, peer: int) -> None:
    for _ in range(BISECT_ITERS + 1):
        dist.recv(buf, src=peer)
        dist.send(ack, dst=peer)


# ---- the report and the verdict (pure)


def _best(sends: list[PairTime]) -> PairTime | None:
    """The fastest of a node's directions (by what it took in both passes): a node is
    slow when even its best path is, which a slow peer at the other end does not make."""
    timed = [p for p in sends if p.us > 0]
    return min(timed, key=lambda p: p.held_us) if timed else None


def node_sends(per_node: PerNode) -> dict[str, PairTime]:
    """Each node's best send to another node."""
    return _best_by_node(per_node, lambda p, leader: p.a == leader)


def node_receives(per_node: PerNode) -> dict[str, PairTime]:
    """Each node's best receive from another node."""
    return _best_by_node(per_node, lambda p, leader: p.b == leader)


def _best_by_node(per_node: PerNode, mine) -> dict[str, PairTime]:
    found = {n.host: _best([p for p in per_node.sends if mine(p, per_node.leader(n))]) for n in per_node.nodes}
    return {host: best for host, best in found.items() if best is not None}


def _gbps(value: float) -> float | None:
    return round(value, 4) if math.isfinite(value) else None


def node_rows(per_node: PerNode) -> list[dict]:
    """One dict per node, as the JSON carries them (docs/commands/allreduce.md, `per_node`)."""
    sends, receives = node_sends(per_node), node_receives(per_node)
    rows = []
    for n in per_node.nodes:
        intra = min(n.intra_us, n.intra_repeat_us) if n.intra_repeat_us else n.intra_us
        out, into = sends.get(n.host), receives.get(n.host)
        rows.append(
            {
                "node": n.host,
                "ranks": list(n.ranks),
                "intra_us": intra or None,
                "intra_busbw_gbps": _gbps(busbw_gbps("all_reduce", per_node.nbytes, intra, len(n.ranks))) if intra else None,
                "inter_send_us": out.held_us if out else None,
                "inter_send_gbps": _gbps(algbw_gbps(per_node.nbytes, out.held_us)) if out else None,
                "inter_receive_us": into.held_us if into else None,
                "inter_receive_gbps": _gbps(algbw_gbps(per_node.nbytes, into.held_us)) if into else None,
            }
        )
    return rows


def per_node_json(per_node: PerNode) -> dict:
    return {
        "bytes": per_node.nbytes,
        "nodes": node_rows(per_node),
        "sends": [{"from": p.a, "to": p.b, "us": p.us, "repeat_us": p.repeat_us} for p in per_node.sends],
    }


def node_findings(per_node: PerNode | None) -> list[Finding]:
    """A node whose inter-node sends (and, with 3 nodes or more, receives: with two,
    one node's receive is the other's send) are below the other nodes' beyond the
    run's noise floor and the margin; else one ok line with the floor. Nothing on one
    node, or when the figures cannot be compared (a node not timed twice)."""
    if per_node is None or len(per_node.nodes) < 2:
        return []
    sends, receives = node_sends(per_node), node_receives(per_node)
    host_of = {p.a: h for h, p in sends.items()}
    kinds = [PairKind.of(SENDS, list(sends.values()))] if len(sends) >= 2 else []
    if len(per_node.nodes) >= 3 and len(receives) >= 2:
        kinds.append(PairKind.of(RECEIVES, list(receives.values())))
    judged = [k for k in kinds if k.comparable]
    if not judged:
        return []
    size = format_size(per_node.nbytes)
    evidence: dict = {
        "bytes": per_node.nbytes,
        "nodes": {r["node"]: _node_evidence(r) for r in node_rows(per_node)},
        "kinds": {k.kind: {"baseline us": round(k.base_us, 1), "noise floor %": round(100 * k.floor), "limit us": round(k.limit_us)} for k in judged},
        "margin %": round(100 * (SLOW_FACTOR - 1)),
    }
    slow = [(k, p) for k in judged for p in k.slow()]
    if not slow:
        spans = "; ".join(
            f"{k.kind} {min(p.held_us for p in k.pairs):.0f} to {max(p.held_us for p in k.pairs):.0f} µs" for k in judged
        )
        return [ALLREDUCE_SLOW_NODE(case="none", severity=Severity.OK, no_fix=True, evidence=evidence, count=len(per_node.nodes),
                                    size=size, spans=spans, noise=noise(judged))]
    parts, names = [], []
    for k, p in sorted(slow, key=lambda kp: -kp[1].held_us):
        host = host_of.get(p.a, "?") if k.kind == SENDS else per_node.node_of(p.b).host
        names.append(host)
        verb = "sends to the other nodes" if k.kind == SENDS else "receives from the other nodes"
        share = k.base_us / p.held_us
        parts.append(
            f"node {host} {verb} at {_rate(per_node.nbytes, p.held_us)} ({size} in {p.us:.0f} µs, again {p.repeat_us:.0f} µs), "
            f"{100 * share:.0f}% of the others' {_rate(per_node.nbytes, k.base_us)}"
        )
    nodes = sorted(set(names), key=names.index)
    others = ", ".join(n.host for n in per_node.nodes if n.host != nodes[0])
    return [
        ALLREDUCE_SLOW_NODE(case="two" if len(per_node.nodes) == 2 else "many", evidence=dict(evidence, slow=nodes),
                            slow="; ".join(parts), noise=noise(judged), node=nodes[0], other=others, nodes=", ".join(nodes))
    ]


def _rate(nbytes: int, us: float) -> str:
    gbps = algbw_gbps(nbytes, us)
    return f"{gbps:.3f} GB/s" if gbps < 1 else f"{gbps:.2f} GB/s"


def _node_evidence(row: dict) -> str:
    """"ranks 0, 1: intra-node 0.128 GB/s busbw, sends 0.403 GB/s, receives 0.002 GB/s"."""
    intra = f"{row['intra_busbw_gbps']} GB/s busbw" if row["intra_busbw_gbps"] is not None else "one rank"
    ranks = ", ".join(str(r) for r in row["ranks"])
    return f"ranks {ranks}: intra-node {intra}, sends {row['inter_send_gbps']} GB/s, receives {row['inter_receive_gbps']} GB/s"
