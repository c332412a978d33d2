"""The variables that decide how ranks find and talk to each other:
NCCL_* and GLOO_* interface choices, transports switched off, MASTER_ADDR
and MASTER_PORT, the launcher's RANK/WORLD_SIZE."""

from __future__ import annotations

from gpudoctor.catalog.findings.environment import (
    DISTRIBUTED_ENV,
    DISTRIBUTED_ENV_INCOMPLETE,
    GLOO_SOCKET_IFNAME_MISSING,
    MASTER_ADDR_UNRESOLVABLE,
    MASTER_PORT_INVALID,
    NCCL_IB_DISABLED,
    NCCL_P2P_DISABLED,
    NCCL_SOCKET_IFNAME_MISSING,
)
from gpudoctor.checks.wording import shown
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.probe.environment import EnvironmentFacts
from gpudoctor.probe.facts import Facts

LAUNCH_VARS = ("MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE")


def interface_matches(spec: str, names: list[str]) -> tuple[list[str], bool]:
    """The interfaces NCCL_SOCKET_IFNAME selects, and whether it is an
    exclusion list. NCCL's syntax: a comma list of name prefixes; `=` before
    the list means exact names; `^` means "all but these" (prefixes or, with
    `^=`, exact names)."""
    text = spec.strip()
    exclude = text.startswith("^")
    if exclude:
        text = text[1:]
    exact = text.startswith("=")
    if exact:
        text = text[1:]
    wanted = [w.strip() for w in text.split(",") if w.strip()]

    def hit(name: str) -> bool:
        return any(name == w if exact else name.startswith(w) for w in wanted)

    chosen = [n for n in names if hit(n) != exclude]
    return chosen, exclude


def _interface_names(facts: Facts) -> list[str] | None:
    interfaces = facts.system.interfaces
    return [i.name for i in interfaces] if isinstance(interfaces, tuple) else None


def _nccl_in_use(facts: Facts) -> bool:
    backends = facts.torch.backends
    return isinstance(backends, dict) and bool(backends.get("nccl"))


def check_socket_ifname(facts: Facts) -> list[Finding]:
    names = _interface_names(facts)
    if names is None:
        return []
    findings = []
    nccl = facts.environment.get("NCCL_SOCKET_IFNAME")
    if nccl is not None:
        chosen, exclude = interface_matches(nccl, names)
        if not chosen:
            evidence = {"NCCL_SOCKET_IFNAME": nccl, "interfaces here": names, "torch has NCCL": _nccl_in_use(facts)}
            severity = Severity.ERROR if _nccl_in_use(facts) else Severity.WARN
            findings.append(NCCL_SOCKET_IFNAME_MISSING(severity=severity, evidence=evidence, value=repr(nccl), interface=_suggest(names)))
    gloo = facts.environment.get("GLOO_SOCKET_IFNAME")
    if gloo is not None:
        missing = [n.strip() for n in gloo.split(",") if n.strip() and n.strip() not in names]
        if missing or not gloo.strip():
            findings.append(
                GLOO_SOCKET_IFNAME_MISSING(
                    evidence={"GLOO_SOCKET_IFNAME": gloo, "interfaces here": names},
                    value=repr(gloo),
                    missing=", ".join(missing) or "(empty)",
                    interface=_suggest(names),
                )
            )
    return findings


def _suggest(names: list[str]) -> str:
    preferred = [n for n in names if n != "lo" and not n.startswith(("docker", "veth", "ifb", "virbr", "br-"))]
    return (preferred or names or ["eth0"])[0]


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip() not in ("", "0")


def check_transports_disabled(facts: Facts) -> list[Finding]:
    env = facts.environment
    findings = []
    p2p = env.get("NCCL_P2P_DISABLE")
    if _truthy(p2p):
        pairs = [f"GPU {l.a}-{l.b}: {shown(l.p2p_read)}" for l in facts.nvml.links] or "no GPU pairs"
        findings.append(NCCL_P2P_DISABLED(evidence={"NCCL_P2P_DISABLE": p2p, "P2P between GPUs": pairs}, value=p2p))
    ib = env.get("NCCL_IB_DISABLE")
    if _truthy(ib):
        findings.append(NCCL_IB_DISABLED(evidence={"NCCL_IB_DISABLE": ib}, value=ib))
    return findings


def check_master(facts: Facts) -> list[Finding]:
    return master_findings(facts.environment)


def master_findings(env: EnvironmentFacts) -> list[Finding]:
    """MASTER_ADDR that does not resolve, MASTER_PORT that is not a port: also
    what allreduce and train-smoke check before they join a job."""
    findings = []
    addr = env.get("MASTER_ADDR")
    resolved = env.master_addr
    if addr is not None and (not addr.strip() or (resolved is not None and not isinstance(resolved.addresses, tuple))):
        lookup = "is empty" if not addr.strip() or resolved is None else shown(resolved.addresses)
        findings.append(MASTER_ADDR_UNRESOLVABLE(evidence={"MASTER_ADDR": addr, "lookup": lookup}, value=repr(addr), lookup=lookup))
    port = env.get("MASTER_PORT")
    if port is not None and not (port.strip().isdigit() and 1 <= int(port.strip()) <= 65535):
        findings.append(MASTER_PORT_INVALID(evidence={"MASTER_PORT": port}, value=repr(port)))
    return findings


# Set by NVIDIA's CUDA and NGC container images to say which NCCL the image installed;
# NCCL never reads it (one H200 container had NCCL_VERSION=2.28.3-1 while torch ran its
# own NCCL 2.28.9: tests/fixtures/gpu_truth/h200/check.out), so it is no launcher setting.
IMAGE_LABELS = frozenset({"NCCL_VERSION"})


def check_launch_env(facts: Facts) -> list[Finding]:
    env = facts.environment
    present = {k: env.get(k) for k in LAUNCH_VARS if env.get(k) is not None}
    nccl = {k: v for k, v in env.variables.items() if k.startswith("NCCL_") and k not in IMAGE_LABELS}
    slurm = {k: v for k, v in env.variables.items() if k in ("SLURM_JOB_ID", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID")}
    evidence = {**present, **nccl, **slurm}
    if not evidence:
        return [DISTRIBUTED_ENV(case="none")]
    needed = {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
    missing = sorted(needed - set(present))
    # Only a set that names a rank is meant for env:// rendezvous; MASTER_* alone is harmless.
    if {"RANK", "WORLD_SIZE"} & set(present) and missing:
        return [DISTRIBUTED_ENV_INCOMPLETE(case="check", evidence={**evidence, "missing": missing}, missing=", ".join(missing))]
    shown_vars = ", ".join(f"{k}={v}" for k, v in list(evidence.items())[:6]) + (" …" if len(evidence) > 6 else "")
    return [DISTRIBUTED_ENV(case="set", severity=Severity.INFO, evidence=evidence, variables=shown_vars)]


CHECKS = (check_socket_ifname, check_transports_disabled, check_master, check_launch_env)
