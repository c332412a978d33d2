"""The environment and the network across the nodes of a job: every compared
variable (NCCL_*, GLOO_*, CUDA_*, MASTER_*, TORCH_NCCL_*), graded by what a
difference does, and the interfaces NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME
select on each node."""

from __future__ import annotations

from collections.abc import Sequence

from gpudoctor.catalog.findings.fleet import FLEET_ENV_MISMATCH, FLEET_SOCKET_IFNAME_MISSING
from gpudoctor.checks.environment import interface_matches
from gpudoctor.checks.fleet_diff import Difference, FleetColumn, where
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.checks.node import SOCKET_IFNAME_VARS, NodeFacts
from gpudoctor.core.unavailable import Unavailable

UNSET = "unset"
EMPTY = "''"  # a variable set to the empty string (CUDA_VISIBLE_DEVICES= hides every GPU)
# NCCL and gloo read their variables on every rank, and nearly all of them choose
# a transport, an algorithm, buffers or channels: set differently on two nodes, the
# ranks disagree (a hang or an error at the first collective) or one node runs
# slower, which every rank then waits for. So a difference in any of them is an
# error, unless listed below.
STRICT_PREFIXES = ("NCCL_", "TORCH_NCCL_", "GLOO_")
# Outside those prefixes, the ones that break or slow a job all the same.
BREAKING_VARS = {"CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS", "MASTER_ADDR", "MASTER_PORT", "TORCH_DISTRIBUTED_DEBUG"}
# Paths to per-node files: legitimately different on different hardware.
PER_NODE_VARS = {"NCCL_TOPO_FILE", "NCCL_GRAPH_FILE", "NCCL_CONF_FILE"}
# Debug output and installation paths: differing values change nothing between ranks.
HARMLESS_VARS = {
    "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE", "NCCL_HOSTID",
    "CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "CUDA_CACHE_PATH", "CUDA_INSTALL_PATH",
}


def _listed(value: str | None) -> int | None:
    """How many devices a CUDA_VISIBLE_DEVICES value lists; None: unset (every GPU)."""
    if value is None or value == UNSET:
        return None
    return len([e for e in value.split(",") if e.strip()]) if value.strip() not in ("", EMPTY, "-1") else 0


def _visible_devices_severity(nodes: Sequence[NodeFacts], values: Sequence[str | None]) -> Severity:
    """Another order or other ids of as many GPUs: a warning. Fewer GPUs on some
    node (a shorter list, or a list where others have none): an error, unless
    torch is seen to count the same GPUs everywhere (then the GPU count says so)."""
    counts = [n.torch_gpus for n in nodes]
    if all(isinstance(c, int) and c > 0 for c in counts) and len(set(counts)) == 1:
        return Severity.WARN
    return Severity.ERROR if len({_listed(v) for v in values}) > 1 else Severity.WARN


def _variable_severity(name: str, nodes: Sequence[NodeFacts], values: Sequence[str | None]) -> Severity:
    if name in SOCKET_IFNAME_VARS:
        return ifname_severity(nodes, name)
    if name in HARMLESS_VARS:
        return Severity.INFO
    if name in PER_NODE_VARS:
        return Severity.WARN
    if name in BREAKING_VARS or name.startswith(STRICT_PREFIXES):
        return Severity.ERROR
    if name == "CUDA_VISIBLE_DEVICES":
        return _visible_devices_severity(nodes, values)
    return Severity.WARN


def variable_case(name: str, severity: Severity) -> str:
    """Why nodes that disagree on variable `name` matter: the fleet-env-mismatch case for its kind."""
    if name in SOCKET_IFNAME_VARS and severity is Severity.INFO:
        return "interfaces"
    if name in SOCKET_IFNAME_VARS and severity is Severity.WARN:
        return "interfaces-unsure"
    if name in HARMLESS_VARS:
        return "harmless"
    if name.startswith(("NCCL_", "TORCH_NCCL_")):
        return "nccl"
    if name.startswith("GLOO_"):
        return "gloo"
    if name.startswith("MASTER_"):
        return "rendezvous"
    return "other"


def variable_mismatch(column: FleetColumn, d: Difference) -> Finding:
    """fleet-env-mismatch for one variable: its why by what the variable does, its fix
    the other nodes' value, except for an interface (NIC names differ per node: the
    others' value is no fix for this one)."""
    case = variable_case(column.label, column.severity)
    fix_case = case if case.startswith("interfaces") else "unset" if d.common == UNSET else "export"
    return FLEET_ENV_MISMATCH(case=case, fix_case=fix_case, severity=column.severity, evidence=d.evidence,
                              name=column.label, values=d.values, value=d.common, odd=d.odd)


def _shown(value: str | None) -> str:
    """A variable's value as the table and the titles show it: set-but-empty is ''."""
    return UNSET if value is None else value if value else EMPTY


def variable_columns(nodes: Sequence[NodeFacts]) -> list[FleetColumn]:
    names = sorted({k for n in nodes for k in n.variables})
    columns = []
    for name in names:
        values = tuple(_shown(n.variables.get(name)) for n in nodes)
        differs = len(set(values)) > 1
        columns.append(FleetColumn(name, values, _variable_severity(name, nodes, values) if differs else Severity.OK, True))
    return columns


IFACE_LABELS = {"NCCL_SOCKET_IFNAME": "NCCL interface", "GLOO_SOCKET_IFNAME": "gloo interface"}
EXCLUDED_IFACES = ("lo", "docker", "veth", "virbr", "br-", "ifb")


def selected(n: NodeFacts, var: str) -> list[str] | None:
    """The interfaces `var` selects on node n; None when unset or unknown."""
    spec = n.variables.get(var)
    if spec is None or isinstance(n.interfaces, Unavailable):
        return None
    if var == "GLOO_SOCKET_IFNAME":  # gloo takes exact names
        wanted = [w.strip() for w in spec.split(",") if w.strip()]
        return wanted if wanted and all(w in n.interfaces for w in wanted) else []
    return interface_matches(spec, list(n.interfaces))[0]


def ifname_severity(nodes: Sequence[NodeFacts], var: str) -> Severity:
    """What a difference in `var` between the nodes does, each value judged against
    its own node's interfaces (NIC names often differ per node): an error only where
    some node's value names no interface there (fleet-socket-ifname-missing says
    which); info where every node sets it and each value names an interface of its
    node; a warning where some node leaves it unset (NCCL and gloo then choose) or
    its interfaces are unknown: nothing here decides whether those reach the others."""
    chosen = [selected(n, var) for n in nodes]
    if any(c == [] for c in chosen):
        return Severity.ERROR
    return Severity.INFO if all(chosen) else Severity.WARN


def ifname_cell(spec: str | None, chosen: list[str] | None) -> str | None:
    if spec is None:
        return UNSET
    if chosen is None:
        return None  # the node's interfaces are unknown
    return f"{spec} -> {', '.join(chosen) or 'none'}"


def check_socket_ifname(nodes: Sequence[NodeFacts]) -> list[Finding]:
    findings = []
    for var in SOCKET_IFNAME_VARS:
        missing = [n for n in nodes if selected(n, var) == []]
        if not missing:
            continue
        have = [n for n in nodes if n not in missing and isinstance(n.interfaces, tuple)]
        common = sorted(set.intersection(*(set(n.interfaces) for n in nodes if isinstance(n.interfaces, tuple))))
        usable = [i for i in common if not i.startswith(EXCLUDED_IFACES)] or common or ["eth0"]
        values = {n.name: n.variables.get(var) for n in missing}
        shown_values = sorted(set(v for v in values.values() if v is not None))
        evidence = {
            var: values,
            "interfaces there": {n.name: list(n.interfaces) for n in missing if isinstance(n.interfaces, tuple)},
            "interfaces on every node": common,
        }
        findings.append(
            FLEET_SOCKET_IFNAME_MISSING(
                case="others-have" if have else "no-other",
                evidence=evidence,
                var=var,
                value="/".join(repr(v) for v in shown_values),
                missing=where(missing),
                have=where(have),
                backend="NCCL" if var.startswith("NCCL") else "gloo",
                interface=usable[0],
            )
        )
    return findings


def interface_columns(nodes: Sequence[NodeFacts]) -> list[FleetColumn]:
    """For each *_SOCKET_IFNAME some node sets: its value and what it selects, per node."""
    columns = []
    for var in SOCKET_IFNAME_VARS:
        if not any(var in n.variables for n in nodes):
            continue
        chosen = [selected(n, var) for n in nodes]
        values = tuple(ifname_cell(n.variables.get(var), c) for n, c in zip(nodes, chosen))
        differs = any(c == [] for c in chosen) or len({v for v in values if v is not None}) > 1
        severity = ifname_severity(nodes, var) if differs else Severity.OK
        columns.append(FleetColumn(IFACE_LABELS[var], values, severity))
    return columns
