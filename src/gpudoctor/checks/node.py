"""One node of a job, as the fleet comparison sees it: the few facts that must
agree across the nodes of a distributed job, read out of a node's full Facts.

Pure: `node_facts` only reads a Facts snapshot (probed on that node, or loaded
from a file); where the snapshot lacks a value, the record says so with
Unavailable rather than guessing.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpudoctor.probe.facts import Facts
from gpudoctor.core.unavailable import Unavailable

# The variables compared across nodes: NCCL's and gloo's own, CUDA's, and the
# rendezvous address. TORCH_NCCL_* and TORCH_DISTRIBUTED_* change how torch
# drives NCCL (async error handling, blocking waits, debug checks).
COMPARED_PREFIXES = ("NCCL_", "GLOO_", "CUDA_", "MASTER_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_")
SOCKET_IFNAME_VARS = ("NCCL_SOCKET_IFNAME", "GLOO_SOCKET_IFNAME")


@dataclass(frozen=True)
class NodeFacts:
    name: str  # how the report names the node (its hostname, unless two nodes share one)
    hostname: str | Unavailable
    node_rank: int | None  # torchrun's GROUP_RANK or SLURM_NODEID; None when not in a job
    ranks: tuple[int, ...]  # the job's global ranks on this node; () for a saved snapshot
    python: str
    torch: str | Unavailable  # "2.13.0+cu126", or why it cannot be imported
    torch_cuda: str | None | Unavailable  # None: a CPU build
    nccl: str | None | Unavailable  # the NCCL torch ships; None without CUDA
    nccl_available: bool | Unavailable  # torch.distributed.is_nccl_available()
    driver: str | None  # None: no NVIDIA driver (driver_error says why)
    driver_cuda: str | None | Unavailable  # the newest CUDA the driver supports
    driver_error: str
    gpus: tuple[str, ...]  # GPU names in nvidia-smi order (NVML), else as torch lists them
    torch_gpus: int | Unavailable  # torch.cuda.device_count() in a fresh process
    visible_devices: str | None  # CUDA_VISIBLE_DEVICES
    variables: dict[str, str]  # every NCCL_*, GLOO_*, CUDA_*, MASTER_*, TORCH_NCCL_* variable set
    shm_bytes: int | Unavailable  # /dev/shm size
    infiniband: tuple[str, ...] | Unavailable  # RDMA devices: "mlx5_0" (a DOWN port adds " (down)")
    interfaces: tuple[str, ...] | Unavailable  # network interface names, for *_SOCKET_IFNAME
    # GPU health in a few words ("ok", "row remap pending (GPU 3); Xid 79") and how grave:
    # the one bad node among sixteen, at a glance
    health: str | Unavailable = Unavailable("not read")
    health_severity: str = "ok"  # a Severity value

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)


def compared_variables(variables: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in sorted(variables.items()) if k.startswith(COMPARED_PREFIXES)}


def node_rank_of(variables: dict[str, str]) -> int | None:
    for name in ("GROUP_RANK", "NODE_RANK", "SLURM_NODEID"):
        value = variables.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return None


def _infiniband(facts: Facts) -> tuple[str, ...] | Unavailable:
    if isinstance(facts.host, Unavailable):
        return facts.host
    devices = facts.host.infiniband
    if isinstance(devices, Unavailable):
        return devices
    return tuple(d.name if d.active or not d.ports else f"{d.name} (down)" for d in devices)


def _gpus(facts: Facts) -> tuple[str, ...]:
    if facts.nvml.available:
        return tuple(str(g.name) if isinstance(g.name, str) else "?" for g in facts.nvml.gpus)
    return tuple(str(d.name) if isinstance(d.name, str) else "?" for d in facts.torch.devices)


def node_facts(facts: Facts, name: str | None = None, ranks: tuple[int, ...] = ()) -> NodeFacts:
    """The comparable record of one node. `name` overrides the snapshot's node name."""
    t, nv, env = facts.torch, facts.nvml, facts.environment
    host = facts.host
    hostname = host if isinstance(host, Unavailable) else host.hostname
    interfaces = facts.system.interfaces
    backends = t.backends
    return NodeFacts(
        name=name or (host.name if not isinstance(host, Unavailable) else "node"),
        hostname=hostname,
        node_rank=node_rank_of(env.variables),
        ranks=tuple(ranks),
        python=facts.system.python,
        torch=t.version if t.imported else Unavailable(f"import failed: {t.error}"),
        torch_cuda=t.cuda,
        nccl=t.nccl,
        nccl_available=backends.get("nccl", False) if isinstance(backends, dict) else backends,
        driver=nv.driver_version if nv.available and isinstance(nv.driver_version, str) else None,
        driver_cuda=nv.cuda_driver_version if nv.available else None,
        driver_error="" if nv.available else nv.error,
        gpus=_gpus(facts),
        torch_gpus=t.device_count,
        visible_devices=facts.visible_devices,
        variables=compared_variables(env.variables),
        shm_bytes=facts.system.shm_total_bytes,
        infiniband=_infiniband(facts),
        interfaces=tuple(i.name for i in interfaces) if isinstance(interfaces, tuple) else interfaces,
        **_health(facts),
    )


def _health(facts: Facts) -> dict:
    from gpudoctor.checks.gpu_health import health_summary  # the judgement is the checks' own

    summary = health_summary(facts)
    if summary is None:
        return {"health": Unavailable("no GPU health read on this node")}
    return {"health": summary[0], "health_severity": summary[1].value}


def distinct_names(nodes: list[NodeFacts]) -> list[NodeFacts]:
    """Nodes that share a name (one hostname for two torchrun agents, two
    snapshots from one machine) get their node rank, or their place, appended."""
    from dataclasses import replace

    count: dict[str, int] = {}
    for n in nodes:
        count[n.name] = count.get(n.name, 0) + 1
    out = []
    for i, n in enumerate(nodes):
        if count[n.name] > 1:
            n = replace(n, name=f"{n.name}#{n.node_rank if n.node_rank is not None else i}")
        out.append(n)
    return out
