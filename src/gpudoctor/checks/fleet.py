"""The nodes of one job compared: NodeFacts of N nodes -> findings.

A distributed job needs its nodes to agree on the software that talks between
them (torch, NCCL, the driver), on the hardware each rank expects (GPU model
and count), on the network NCCL and gloo use (the socket interface, the
InfiniBand devices) and on the variables that steer NCCL. Each fact that
differs is one finding naming which nodes (and ranks) hold which value.
Node-local findings of every node are shown once, with the nodes they apply to.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from gpudoctor.catalog.findings.fleet import (
    FLEET_CONSISTENT,
    FLEET_DRIVER_MISMATCH,
    FLEET_GPU_COUNT_MISMATCH,
    FLEET_GPU_MODEL_MISMATCH,
    FLEET_GPUS_FEWER_THAN_RANKS,
    FLEET_INFINIBAND_MISMATCH,
    FLEET_NCCL_MISMATCH,
    FLEET_PYTHON_MISMATCH,
    FLEET_SHM_MISMATCH,
    FLEET_TORCH_MISMATCH,
)
from gpudoctor.catalog.kind import FindingKind
from gpudoctor.checks.fleet_diff import Difference, FleetColumn, difference, odd_values, rank_ranges, ranks_evidence, where
from gpudoctor.checks.fleet_env import check_socket_ifname, interface_columns, variable_columns, variable_mismatch
from gpudoctor.checks.wording import plural, size
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.core.codec import to_plain
from gpudoctor.probe.facts import Facts
from gpudoctor.checks.node import SOCKET_IFNAME_VARS, NodeFacts, distinct_names, node_facts
from gpudoctor.core.unavailable import Unavailable

# Node-local findings the fleet comparison says better (with the other nodes' values).
SUPERSEDED = {"nccl-socket-ifname-missing", "gloo-socket-ifname-missing"}
# Node-local findings about this rank's own place in the job (RANK=8, ...): the table has them.
NOT_GROUPED = {"distributed-env"}


def _text(value: object) -> str | None:
    """A fact value as the table and the findings show it; None: unknown, not compared."""
    if isinstance(value, Unavailable):
        return None
    if value is None:
        return "none"
    return str(value)


def _torch(n: NodeFacts) -> str | None:
    if isinstance(n.torch, Unavailable):
        return n.torch.reason  # a torch that does not import differs from one that does
    cuda = n.torch_cuda
    build = "CPU build" if cuda is None else "CUDA ?" if isinstance(cuda, Unavailable) else f"CUDA {cuda}"
    return f"{n.torch} ({build})"


def _nccl(n: NodeFacts) -> str | None:
    if isinstance(n.torch, Unavailable):
        return None  # said by the torch row
    if n.nccl_available is False:
        return "not in this torch"
    return _text(n.nccl)


def _driver(n: NodeFacts) -> str | None:
    if n.driver is None:
        return "none"
    cuda = _text(n.driver_cuda)
    return f"{n.driver} (CUDA {cuda})" if cuda else n.driver


def _gpu_model(n: NodeFacts) -> str | None:
    if not n.gpus:
        return "none"
    counts: dict[str, int] = {}
    for name in n.gpus:
        counts[name] = counts.get(name, 0) + 1
    return " + ".join(name if len(counts) == 1 else f"{c}x {name}" for name, c in counts.items())


def _gpu_count(n: NodeFacts) -> str | None:
    seen = _text(n.torch_gpus)
    return f"{seen} of {n.gpu_count}" if seen is not None else f"? of {n.gpu_count}"


def _infiniband(n: NodeFacts) -> str | None:
    if isinstance(n.infiniband, Unavailable):
        return None
    return ", ".join(n.infiniband) or "none"


def _shm(n: NodeFacts) -> str | None:
    return size(n.shm_bytes) if isinstance(n.shm_bytes, int) else None


def _python(n: NodeFacts) -> str | None:
    return n.python


@dataclass(frozen=True)
class Fact:
    """One compared fact: its table label (the title names it too), how a node's value
    reads, and the finding a difference becomes: its kind, called with the difference."""

    label: str
    value: Callable[[NodeFacts], str | None]
    kind: FindingKind  # its severity grades the table's column
    report: Callable[[Difference], Finding]


def _pin_torch(d: Difference) -> Finding:
    version = d.common.split(" ")[0]
    base, _, local = version.partition("+")
    if local.startswith(("cu", "rocm", "cpu")):  # a wheel from PyTorch's own index
        return FLEET_TORCH_MISMATCH(fix_case="index", evidence=d.evidence, values=d.values, version=base, index=local, odd=d.odd)
    return FLEET_TORCH_MISMATCH(fix_case="pypi", evidence=d.evidence, values=d.values, version=base, odd=d.odd)


FACTS = (
    Fact("torch", _torch, FLEET_TORCH_MISMATCH, _pin_torch),
    Fact("NCCL", _nccl, FLEET_NCCL_MISMATCH,
         lambda d: FLEET_NCCL_MISMATCH(evidence=d.evidence, values=d.values, version=d.common, odd=d.odd)),
    Fact("driver", _driver, FLEET_DRIVER_MISMATCH,
         lambda d: FLEET_DRIVER_MISMATCH(evidence=d.evidence, values=d.values, odd=d.odd, driver=d.common.split(" ")[0])),
    Fact("GPU model", _gpu_model, FLEET_GPU_MODEL_MISMATCH,
         lambda d: FLEET_GPU_MODEL_MISMATCH(evidence=d.evidence, values=d.values, model=d.common, odd=d.odd)),
    Fact("GPUs (torch of NVML)", _gpu_count, FLEET_GPU_COUNT_MISMATCH,
         lambda d: FLEET_GPU_COUNT_MISMATCH(evidence=d.evidence, values=d.values, odd=d.odd, count=d.common)),
    Fact("InfiniBand", _infiniband, FLEET_INFINIBAND_MISMATCH,
         lambda d: FLEET_INFINIBAND_MISMATCH(evidence=d.evidence, values=d.values, odd=d.odd, infiniband=d.common)),
    Fact("Python", _python, FLEET_PYTHON_MISMATCH,
         lambda d: FLEET_PYTHON_MISMATCH(evidence=d.evidence, values=d.values, odd=d.odd, version=d.common)),
    Fact("/dev/shm", _shm, FLEET_SHM_MISMATCH,
         lambda d: FLEET_SHM_MISMATCH(evidence=d.evidence, values=d.values, size=d.common.replace(" ", "").replace("iB", ""), odd=d.odd)),
)


def check_gpus_for_ranks(nodes: Sequence[NodeFacts]) -> list[Finding]:
    """More ranks on a node than GPUs torch sees there, when the job runs on GPUs at all."""
    if not any(isinstance(n.torch_gpus, int) and n.torch_gpus > 0 for n in nodes):
        return []
    short = [n for n in nodes if n.ranks and isinstance(n.torch_gpus, int) and n.torch_gpus < len(n.ranks)]
    if not short:
        return []
    fewest = min(n.torch_gpus for n in short if isinstance(n.torch_gpus, int))
    runs = "; ".join(f"{where([n])} runs {len(n.ranks)} ranks on {plural(n.torch_gpus, 'GPU')}"
                     for n in short if isinstance(n.torch_gpus, int))  # all of them: `short` kept only ints
    evidence = {n.name: {"ranks": len(n.ranks), "GPUs torch sees": n.torch_gpus} for n in short}
    return [FLEET_GPUS_FEWER_THAN_RANKS(evidence=evidence, runs=runs, nproc=max(fewest, 1), nodes=", ".join(n.name for n in short))]


def fleet_columns(nodes: Sequence[NodeFacts]) -> list[FleetColumn]:
    """Every compared fact, then every compared variable, across the nodes."""
    columns = []
    for fact in FACTS:
        values = tuple(fact.value(n) for n in nodes)
        differs = len({v for v in values if v is not None}) > 1
        columns.append(FleetColumn(fact.label, values, fact.kind.severity if differs else Severity.OK))
    return columns + [_health_column(nodes)] + interface_columns(nodes) + variable_columns(nodes)


def _health_column(nodes: Sequence[NodeFacts]) -> FleetColumn:
    """Each node's GPU health (checks/gpu_health.py); the nodes' own findings say the details."""
    worst = max((Severity(n.health_severity) for n in nodes), key=lambda s: s.rank, default=Severity.OK)
    return FleetColumn("GPU health", tuple(_text(n.health) for n in nodes), worst)


def check_fleet(nodes: Sequence[NodeFacts]) -> list[Finding]:
    """What differs between the nodes, one finding per fact; an OK line when nothing does."""
    findings: list[Finding] = []
    for fact in FACTS:
        d = difference(nodes, fact.label, [fact.value(n) for n in nodes])
        if d:
            findings.append(fact.report(d))
    ifname = check_socket_ifname(nodes)
    said = {var for f in ifname for var in SOCKET_IFNAME_VARS if var in f.evidence}
    for column in variable_columns(nodes):
        if column.differs and column.label not in said:
            d = difference(nodes, column.label, column.values)
            if d:
                findings.append(variable_mismatch(column, d))
    findings += ifname
    findings += check_gpus_for_ranks(nodes)
    if not findings:
        compared = [f.label for f in FACTS] + ([f"{plural(len(variable_columns(nodes)), 'variable')}"] if nodes else [])
        findings.append(FLEET_CONSISTENT(evidence={"nodes": [n.name for n in nodes]}, nodes=plural(len(nodes), "node"),
                                         compared=", ".join(compared)))
    findings.sort(key=lambda f: -f.severity.rank)
    return findings


def group_node_findings(nodes: Sequence[NodeFacts], local: Sequence[Sequence[Finding]]) -> list[Finding]:
    """Each node's own findings, shown once per distinct finding with the nodes it applies to."""
    groups: dict[tuple[str, str, str], tuple[Finding, list[NodeFacts]]] = {}
    for node, findings in zip(nodes, local):
        for f in findings:
            if f.id in SUPERSEDED or f.id in NOT_GROUPED:
                continue
            key = (f.id, f.severity.value, f.title)
            groups.setdefault(key, (f, []))[1].append(node)
    out = []
    for f, on in groups.values():
        place = where(on, len(nodes))
        title = f"{place}: {f.title}" if len(nodes) > 1 else f.title
        out.append(replace(f, title=title, evidence={**f.evidence, "nodes": [n.name for n in on], **ranks_evidence(on)}))
    return out


def fleet_findings(nodes: Sequence[NodeFacts], local: Sequence[Sequence[Finding]]) -> tuple[Finding, ...]:
    """The whole fleet report: what differs between the nodes, then each node's own findings."""
    return (*check_fleet(nodes), *group_node_findings(nodes, local))



def compare_nodes(snapshots: Sequence[tuple[Facts, str | None, tuple[int, ...]]]) -> tuple[list[NodeFacts], tuple[Finding, ...]]:
    """(facts, name or None for the snapshot's own, global ranks) of each node ->
    the node records and the whole fleet report's findings."""
    from gpudoctor.checks import run_checks

    nodes = distinct_names([node_facts(facts, name, ranks) for facts, name, ranks in snapshots])
    return nodes, fleet_findings(nodes, [run_checks(facts) for facts, _, _ in snapshots])


def fleet_table(nodes: Sequence[NodeFacts]) -> dict:
    """The nodes x facts table as plain data for render/fleet_table.py: each
    column with its values, its severity and which values stand out."""
    return {
        "nodes": [{"name": n.name, "ranks": rank_ranges(n.ranks) or "-"} for n in nodes],
        "columns": [
            {
                "label": c.label,
                "values": list(c.values),
                "severity": c.severity.value,
                "variable": c.variable,
                "interface": c.variable and c.label in SOCKET_IFNAME_VARS,  # shown by its "... interface" column
                "odd": odd_values(c),
            }
            for c in fleet_columns(nodes)
        ],
    }


def fleet_data(nodes: Sequence[NodeFacts]) -> dict:
    """The `nodes` and `differs` keys of the fleet report's JSON (docs/json.md)."""
    return {"nodes": [to_plain(n) for n in nodes], "differs": [c.label for c in fleet_columns(nodes) if c.differs]}
