"""NCCL's sockets on the loopback interface, and whether the log shows the job spans several machines.

NCCL's bootstrap and its NET/Socket transport use the interface NCCL_SOCKET_IFNAME names (or the first it finds), and it
says which: `NCCL INFO Bootstrap : Using lo:127.0.0.1<0>`, `NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>`, and where
the variable chose it, `NCCL_SOCKET_IFNAME set by environment to lo`. On one machine that works (its ranks reach each
other at 127.0.0.1, and talk through P2P or shared memory); across machines it cannot: every rank advertises 127.0.0.1,
which on each other node is that node itself, so the connections between nodes never form and the job hangs in its first
collective or fails with a remote error (NVIDIA/nccl#1053: hosts with L3 BGP unnumbered networking, whose routable
address sits on lo, and NCCL took lo's first address, 127.0.0.1).

Keyed on the loopback being the only interface NCCL uses (a list that names lo among others is not this) and on the
nodes the log shows (issue 35, heldout21's no-error-line case 40):
- several nodes shown (NCCL's lines from two or more hosts, `nNodes 2`, `--nnodes 2`, `--num_nodes 2`, `NNODES=2`,
  a node rank above 0): warn, the loopback cannot carry this job's traffic between nodes; the log does not show that the
  hang or error came from it;
- one machine shown (NCCL's lines from two or more processes of one host, `--nnodes 1`): nothing, the loopback is enough;
- neither (one process's lines, no node count): info, saying what decides it (the number of nodes).
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.catalog.findings.diagnose import NCCL_SOCKET_LOOPBACK
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge.reruns import HeadLines

# NCCL's own words that it uses the loopback alone (its address, then the end of the line: no second interface)
LOOPBACK = re.compile(
    rb"(?:NET/Socket ?: Using \[0\]|Bootstrap ?: Using (?:\[0\])?)lo:[\w.:%]+(?:<\d+>)?[ \t]*\r?$"
    rb"|NCCL_SOCKET_IFNAME set (?:by environment )?to =?lo[ \t]*\r?$",
    re.MULTILINE,
)
# NCCL's line prefix: host:pid:tid [device] NCCL
PREFIX = re.compile(rb"(?P<host>[A-Za-z0-9][\w.-]{0,62}):(?P<pid>\d+):\d+ \[\d+\] NCCL ")
# How many nodes the job has, in the launch's or NCCL's words
NODES = re.compile(
    rb"\bnNodes (\d+)|--nnodes[= ]+(?:\d+:)?(\d+)|--num[_-]nodes[= ]+(\d+)|--num[_-]machines[= ]+(\d+)|\bNNODES=(\d+)|\bnnodes\s*[=:]\s*(\d+)"
)
# A node other than the first: its rank
NODE_RANK = re.compile(rb"\bNODE_RANK\s*[=:]\s*([1-9]\d*)|--node[_-]rank[= ]+([1-9]\d*)|--machine[_-]rank[= ]+([1-9]\d*)")
LOOPBACK_WORDS = (b"lo:", b"to lo")
PREFIX_WORDS = (b"NCCL ",)
NODES_WORDS = (b"nNodes", b"nnodes", b"num_nodes", b"num-nodes", b"num_machines", b"num-machines", b"NNODES")
NODE_RANK_WORDS = (b"NODE_RANK", b"node_rank", b"node-rank", b"machine_rank", b"machine-rank")
HOSTS_KEPT = 64


class NcclLoopback(HeadLines):
    """NCCL's loopback line and the nodes the input shows, fed block by block (`feed`, `tee`): NCCL chooses its
    interface as the job starts (HeadLines.HEAD, the first MiB)."""

    NEEDLES = LOOPBACK_WORDS + PREFIX_WORDS + NODES_WORDS + NODE_RANK_WORDS

    def __init__(self) -> None:
        super().__init__()
        self.loopback: Optional[tuple[int, str]] = None  # (line, text)
        self.hosts: dict[str, set[bytes]] = {}  # host -> the pids of NCCL's lines from it
        self.nodes = 0  # the largest node count a line states
        self.node_rank: Optional[tuple[int, str]] = None  # a line that names a node rank above 0

    def read_head(self, block: bytes, begin: int, end: int, words: set[bytes]) -> None:
        if self.loopback is None and not words.isdisjoint(LOOPBACK_WORDS) and (m := LOOPBACK.search(block, begin, end)) is not None:
            self.loopback = self.line_at(block, begin, end, m.start())
        if not words.isdisjoint(PREFIX_WORDS) and len(self.hosts) < HOSTS_KEPT:
            for m in PREFIX.finditer(block, begin, end):
                pids = self.hosts.setdefault(m["host"].decode("utf-8", "replace"), set())
                if len(pids) < HOSTS_KEPT:
                    pids.add(m["pid"])
                if len(self.hosts) >= HOSTS_KEPT:
                    break
        if not words.isdisjoint(NODES_WORDS):
            for m in NODES.finditer(block, begin, end):
                self.nodes = max(self.nodes, int(next(v for v in m.groups() if v is not None)))
        if self.node_rank is None and not words.isdisjoint(NODE_RANK_WORDS) and (m := NODE_RANK.search(block, begin, end)) is not None:
            self.node_rank = self.line_at(block, begin, end, m.start())

    def findings(self) -> list[Finding]:
        if self.loopback is None:
            return []
        line, text = self.loopback
        several = ([f"NCCL's lines come from {len(self.hosts)} hosts ({', '.join(sorted(self.hosts)[:4])})"] if len(self.hosts) >= 2 else [])
        several += [f"the job has {self.nodes} nodes"] if self.nodes >= 2 else []
        several += [f"line {self.node_rank[0]}: {self.node_rank[1]}"] if self.node_rank is not None else []
        evidence: dict = {"loopback": f"line {line}: {text}"}
        if several:
            evidence["several nodes"] = several
            return [NCCL_SOCKET_LOOPBACK(case="nodes", evidence=evidence, line=line)]
        one_host = len(self.hosts) == 1 and len(next(iter(self.hosts.values()))) >= 2
        if one_host or self.nodes == 1:
            return []  # one machine: the loopback reaches every rank
        evidence["what decides it"] = "how many machines the job spans (its launch: --nnodes, the hosts in NCCL's lines): on one, the loopback is enough"
        return [NCCL_SOCKET_LOOPBACK(case="unknown", severity=Severity.INFO, evidence=evidence, line=line)]
