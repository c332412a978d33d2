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

from gpudoctor.checks.fleet_diff import AREA, FleetColumn, difference, odd_values, rank_ranges, ranks_evidence, where
from gpudoctor.checks.fleet_env import (
    check_socket_ifname,
    interface_columns,
    variable_columns,
    variable_fix,
    variable_why,
)
from gpudoctor.checks.wording import plural, size
from gpudoctor.core.findings import Finding, Severity, ok
from gpudoctor.core.codec import to_plain
from gpudoctor.probe.facts import Facts
from gpudoctor.checks.node import SOCKET_IFNAME_VARS, NodeFacts, distinct_names, node_facts
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.catalog import fix, why

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
    """One compared fact: its table label, how a node's value reads, and the finding a difference becomes."""

    label: str
    value: Callable[[NodeFacts], str | None]
    # What a difference becomes: its id, severity and why (title and evidence filled in).
    # Made when needed: its why comes from the catalog, which loads on first use.
    finding: Callable[[], Finding]
    fix: Callable[[str, str], str]  # (the odd nodes, the majority value) -> the fix


def _pin_torch(odd: str, value: str) -> str:
    version = value.split(" ")[0]
    base, _, local = version.partition("+")
    if local.startswith(("cu", "rocm", "cpu")):  # a wheel from PyTorch's own index
        return fix("fleet-torch-mismatch", "index", version=base, index=local, odd=odd)
    return fix("fleet-torch-mismatch", "pypi", version=base, odd=odd)


FACTS = (
    Fact(
        "torch", _torch,
        lambda: Finding(id="fleet-torch-mismatch", severity=Severity.ERROR, title="", area=AREA, why=why("fleet-torch-mismatch")),
        _pin_torch,
    ),
    Fact(
        "NCCL", _nccl,
        lambda: Finding(id="fleet-nccl-mismatch", severity=Severity.ERROR, title="", area=AREA, why=why("fleet-nccl-mismatch")),
        lambda odd, v: fix("fleet-nccl-mismatch", version=v, odd=odd),
    ),
    Fact(
        "driver", _driver,
        lambda: Finding(id="fleet-driver-mismatch", severity=Severity.ERROR, title="", area=AREA, why=why("fleet-driver-mismatch")),
        lambda odd, v: fix("fleet-driver-mismatch", odd=odd, driver=v.split(' ')[0]),
    ),
    Fact(
        "GPU model", _gpu_model,
        lambda: Finding(id="fleet-gpu-model-mismatch", severity=Severity.ERROR, title="", area=AREA, why=why("fleet-gpu-model-mismatch")),
        lambda odd, v: fix("fleet-gpu-model-mismatch", model=v, odd=odd),
    ),
    Fact(
        "GPUs (torch of NVML)", _gpu_count,
        lambda: Finding(id="fleet-gpu-count-mismatch", severity=Severity.ERROR, title="", area=AREA, why=why("fleet-gpu-count-mismatch")),
        lambda odd, v: fix("fleet-gpu-count-mismatch", odd=odd, count=v),
    ),
    Fact(
        "InfiniBand", _infiniband,
        lambda: Finding(id="fleet-infiniband-mismatch", severity=Severity.ERROR, title="", area=AREA, why=why("fleet-infiniband-mismatch")),
        lambda odd, v: fix("fleet-infiniband-mismatch", odd=odd, infiniband=v),
    ),
    Fact(
        "Python", _python,
        lambda: Finding(id="fleet-python-mismatch", severity=Severity.WARN, title="", area=AREA, why=why("fleet-python-mismatch")),
        lambda odd, v: fix("fleet-python-mismatch", odd=odd, version=v),
    ),
    Fact(
        "/dev/shm", _shm,
        lambda: Finding(id="fleet-shm-mismatch", severity=Severity.INFO, title="", area=AREA, why=why("fleet-shm-mismatch")),
        lambda odd, v: fix("fleet-shm-mismatch", size=v.replace(' ', '').replace('iB', ''), odd=odd),
    ),
)


def check_gpus_for_ranks(nodes: Sequence[NodeFacts]) -> list[Finding]:
    """More ranks on a node than GPUs torch sees there, when the job runs on GPUs at all."""
    if not any(isinstance(n.torch_gpus, int) and n.torch_gpus > 0 for n in nodes):
        return []
    short = [n for n in nodes if n.ranks and isinstance(n.torch_gpus, int) and n.torch_gpus < len(n.ranks)]
    if not short:
        return []
    fewest = min(n.torch_gpus for n in short if isinstance(n.torch_gpus, int))
    return [
        Finding(
            id="fleet-gpus-fewer-than-ranks",
            severity=Severity.ERROR,
            title="; ".join(f"{where([n])} runs {len(n.ranks)} ranks on {plural(n.torch_gpus, 'GPU')}"  # type: ignore[arg-type]
                            for n in short),
            evidence={n.name: {"ranks": len(n.ranks), "GPUs torch sees": n.torch_gpus} for n in short},
            why=why("fleet-gpus-fewer-than-ranks"),
            fix=fix("fleet-gpus-fewer-than-ranks", nproc=max(fewest, 1), nodes=', '.join(n.name for n in short)),
            area=AREA,
        )
    ]


def fleet_columns(nodes: Sequence[NodeFacts]) -> list[FleetColumn]:
    """Every compared fact, then every compared variable, across the nodes."""
    columns = []
    for fact in FACTS:
        values = tuple(fact.value(n) for n in nodes)
        differs = len({v for v in values if v is not None}) > 1
        columns.append(FleetColumn(fact.label, values, fact.finding().severity if differs else Severity.OK))
    return columns + [_health_column(nodes)] + interface_columns(nodes) + variable_columns(nodes)


def _health_column(nodes: Sequence[NodeFacts]) -> FleetColumn:
    """Each node's GPU health (checks/gpu_health.py); the nodes' own findings say the details."""
    worst = max((Severity(n.health_severity) for n in nodes), key=lambda s: s.rank, default=Severity.OK)
    return FleetColumn("GPU health", tuple(_text(n.health) for n in nodes), worst)


def check_fleet(nodes: Sequence[NodeFacts]) -> list[Finding]:
    """What differs between the nodes, one finding per fact; an OK line when nothing does."""
    findings: list[Finding] = []
    for fact in FACTS:
        got = difference(nodes, fact.label, [fact.value(n) for n in nodes], fact.finding(), fact.fix)
        if got:
            findings.append(got)
    ifname = check_socket_ifname(nodes)
    said = {var for f in ifname for var in SOCKET_IFNAME_VARS if var in f.evidence}
    for column in variable_columns(nodes):
        if column.differs and column.label not in said:
            finding = Finding(id="fleet-env-mismatch", severity=column.severity, title="", area=AREA, why=variable_why(column.label, column.severity))
            got = difference(nodes, column.label, column.values, finding, variable_fix(column.label, column.severity))
            if got and column.label in SOCKET_IFNAME_VARS and column.severity is Severity.INFO:
                got = replace(got, title=got.title + " (each names an interface of its own node)")
            if got:
                findings.append(got)
    findings += ifname
    findings += check_gpus_for_ranks(nodes)
    if not findings:
        compared = [f.label for f in FACTS] + ([f"{plural(len(variable_columns(nodes)), 'variable')}"] if nodes else [])
        findings.append(ok("fleet-consistent", f"{plural(len(nodes), 'node')} agree on " + ", ".join(compared), AREA,
                           nodes=[n.name for n in nodes]))
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
        out.append(
            Finding(
                id=f.id,
                severity=f.severity,
                title=f"{place}: {f.title}" if len(nodes) > 1 else f.title,
                evidence={**f.evidence, "nodes": [n.name for n in on], **ranks_evidence(on)},
                why=f.why,
                fix=f.fix,
                area=f.area,
            )
        )
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
