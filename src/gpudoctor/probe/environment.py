"""The environment variables that decide what a training process sees and how
its ranks find each other, plus the one lookup they imply: whether
MASTER_ADDR resolves (I/O, so it is done here, with a deadline)."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass

from gpudoctor.core.unavailable import Unavailable, describe_error

# Exact names worth recording; plus every name under the prefixes below.
NAMES = (
    "CUDA_VISIBLE_DEVICES",
    "CUDA_DEVICE_ORDER",
    "CUDA_LAUNCH_BLOCKING",
    "HIP_VISIBLE_DEVICES",
    "ROCR_VISIBLE_DEVICES",
    "PYTORCH_CUDA_ALLOC_CONF",
    "PYTORCH_NVML_BASED_CUDA_CHECK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "NODE_RANK",
    "GLOO_SOCKET_IFNAME",
    "OMP_NUM_THREADS",
    # Where an import of torch comes from, and where it finds libcudart & co.
    "PYTHONPATH",
    "LD_LIBRARY_PATH",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
)
# GLOO_, CUDA_ and MASTER_ in full: the nodes of a job are compared on all of them.
PREFIXES = ("NCCL_", "GLOO_", "CUDA_", "MASTER_", "TORCH_", "TORCHELASTIC_", "SLURM_")
RESOLVE_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class AddressResolution:
    host: str
    addresses: tuple[str, ...] | Unavailable  # Unavailable: did not resolve, with why


@dataclass(frozen=True)
class EnvironmentFacts:
    variables: dict[str, str]  # the relevant variables that are set, by name
    master_addr: AddressResolution | None  # None when MASTER_ADDR is unset

    def get(self, name: str) -> str | None:
        return self.variables.get(name)


def relevant(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        k: v for k, v in sorted(environ.items()) if k in NAMES or any(k.startswith(p) for p in PREFIXES)
    }


def resolve(host: str, timeout: float = RESOLVE_TIMEOUT_S) -> AddressResolution:
    """getaddrinfo has no timeout of its own; run it in a daemon thread and
    stop waiting at the deadline (a hung resolver must not hang `check`)."""
    result: list[tuple[str, ...] | Unavailable] = []

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
            result.append(tuple(sorted({str(info[4][0]) for info in infos})))
        except (OSError, UnicodeError) as exc:
            result.append(Unavailable(f"does not resolve ({describe_error(exc)})"))

    worker = threading.Thread(target=lookup, name="gpudoctor-resolve", daemon=True)
    worker.start()
    worker.join(timeout)
    if not result:
        return AddressResolution(host, Unavailable(f"name lookup did not answer within {timeout:.0f} s"))
    return AddressResolution(host, result[0])


def probe_environment(environ: Mapping[str, str] | None = None) -> EnvironmentFacts:
    env = os.environ if environ is None else environ
    variables = relevant(env)
    master = variables.get("MASTER_ADDR")
    return EnvironmentFacts(
        variables=variables,
        master_addr=resolve(master) if master is not None and master.strip() else None,
    )
