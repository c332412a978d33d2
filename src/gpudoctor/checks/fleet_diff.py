"""How a difference between the nodes of a job is said: which ranks and nodes
("ranks 8-15 (node-2)"), one column of values across the nodes, and what the
finding says: each value with the nodes that have it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpudoctor.checks.wording import plural
from gpudoctor.core.findings import Severity
from gpudoctor.checks.node import NodeFacts


def rank_ranges(ranks: Sequence[int]) -> str:
    """[0, 1, 2, 3, 8] -> "0-3,8"."""
    out: list[str] = []
    values = sorted(set(ranks))
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        out.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(out)


def where(nodes: Sequence[NodeFacts], total: int | None = None) -> str:
    """The nodes (and their ranks) a value or finding applies to."""
    if total is not None and len(nodes) == total and total > 1:
        return "both nodes" if total == 2 else f"all {total} nodes"
    names = [n.name for n in nodes]
    shown_names = ", ".join(names[:4]) + (f", … ({len(names)} nodes)" if len(names) > 4 else "")
    ranks = [r for n in nodes for r in n.ranks]
    if not ranks:
        return shown_names
    word = "rank" if len(ranks) == 1 else "ranks"
    return f"{word} {rank_ranges(ranks)} ({shown_names})"


def ranks_evidence(nodes: Sequence[NodeFacts]) -> dict[str, str]:
    ranks = rank_ranges([r for n in nodes for r in n.ranks])
    return {"ranks": ranks} if ranks else {}


@dataclass(frozen=True)
class FleetColumn:
    """One fact across the nodes: a value per node (None: unknown) and how grave a difference is."""

    label: str
    values: tuple[str | None, ...]
    severity: Severity  # OK when every node that knows the value agrees
    variable: bool = False  # an environment variable (its label is its name), not a fact

    @property
    def differs(self) -> bool:
        return self.severity != Severity.OK


def value_groups(nodes: Sequence[NodeFacts], values: Sequence[str | None]) -> list[tuple[str, list[NodeFacts]]]:
    """Nodes by value, the most common value first; unknown values left out."""
    by: dict[str, list[NodeFacts]] = {}
    for n, v in zip(nodes, values):
        if v is not None:
            by.setdefault(v, []).append(n)
    return sorted(by.items(), key=lambda kv: -len(kv[1]))


@dataclass(frozen=True)
class Difference:
    """How the nodes differ in one fact: what a finding's title, evidence and fix say."""

    values: str  # each value with the nodes that have it: "2.4.1 on rank 8 (node-2); 2.5.0 on the other 3 nodes"
    evidence: dict[str, object]
    odd: str  # the nodes without the most common value, comma-separated
    common: str  # the most common value: what a fix sets on the odd nodes


def difference(nodes: Sequence[NodeFacts], label: str, values: Sequence[str | None]) -> Difference | None:
    """`label`'s values across the nodes; None when the nodes that know the value agree."""
    groups = value_groups(nodes, values)
    if len(groups) < 2:
        return None
    (common, majority), odd = groups[0], groups[1:]
    odd_nodes = [n for _, ns in odd for n in ns]
    if len(majority) > len(nodes) / 2:
        parts = [f"{v} on {where(ns)}" for v, ns in odd] + [f"{common} on the other {plural(len(majority), 'node')}"]
    else:
        parts = [f"{v} on {where(ns)}" for v, ns in groups]
    unknown = [n.name for n, v in zip(nodes, values) if v is None]
    evidence: dict[str, object] = {
        "fact": label,
        "values": {v: where(ns) for v, ns in groups},
    }
    if unknown:
        evidence["unknown on"] = unknown
    return Difference("; ".join(parts), evidence, ", ".join(n.name for n in odd_nodes), common)


def odd_values(column: FleetColumn) -> list[bool]:
    """Per node: whether its value stands out: held by fewer nodes than the most
    common value (every value, when no value is most common)."""
    counts: dict[str, int] = {}
    for v in column.values:
        if v is not None:
            counts[v] = counts.get(v, 0) + 1
    if not column.differs or not counts:
        return [False] * len(column.values)
    top = max(counts.values())
    tie = list(counts.values()).count(top) > 1
    return [v is not None and (counts[v] < top or tie) for v in column.values]
