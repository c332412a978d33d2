"""The whole snapshot `check` diagnoses: one frozen Facts, collected here or
read back from a file saved with `gpudoctor check --json`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpudoctor.core.codec import SnapshotError, from_plain, to_plain
from gpudoctor.probe.environment import EnvironmentFacts, probe_environment
from gpudoctor.probe.host import HostFacts, probe_host
from gpudoctor.probe.kernel_log import NOT_READ, KernelLogFacts, probe_kernel_log
from gpudoctor.probe.nvml import NvmlFacts, probe_nvml
from gpudoctor.probe.software import NOT_PROBED, SoftwareFacts, probe_software
from gpudoctor.probe.system import SystemFacts, probe_system
from gpudoctor.probe.torch_info import (
    DEFAULT_TIMEOUT_S,
    InProcessTorch,
    TorchFacts,
    in_process_view,
    torch_child,
)
from gpudoctor.core.unavailable import Unavailable
from gpudoctor.core.user_file import FACTS_CAP, FileRefused, read_capped

SCHEMA = 1


@dataclass(frozen=True)
class Facts:
    schema: int
    gpudoctor: str  # the version that took the snapshot
    collected_at: str  # ISO 8601, UTC
    visible_override: str | None  # `--visible`: the CUDA_VISIBLE_DEVICES torch was probed with
    torch: TorchFacts
    torch_in_process: InProcessTorch
    nvml: NvmlFacts
    environment: EnvironmentFacts
    system: SystemFacts
    # Which node this is (its name, its InfiniBand devices): what `check` compares
    # across the nodes of a job. Unavailable in snapshots saved before it existed.
    host: HostFacts | Unavailable
    # The NVIDIA driver's Xid lines of this boot (GPU faults), where this user may read them.
    kernel_log: KernelLogFacts | Unavailable = NOT_READ
    # Packages, OS, CPU, compilers (the collect_env fields). Unavailable in older snapshots.
    software: SoftwareFacts | Unavailable = NOT_PROBED

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    @classmethod
    def from_dict(cls, data: Any) -> "Facts":
        """Raises SnapshotError when `data` is not a facts snapshot."""
        if not isinstance(data, dict):
            raise SnapshotError(f"expected a JSON object, got {type(data).__name__}")
        if isinstance(data.get("facts"), dict):  # a whole `check --json` report
            data = data["facts"]
        return from_plain(cls, data)

    @property
    def visible_devices(self) -> str | None:
        """The CUDA_VISIBLE_DEVICES the diagnosis is about: the `--visible`
        what-if value, else the environment's."""
        if self.visible_override is not None:
            return self.visible_override
        return self.environment.get("CUDA_VISIBLE_DEVICES")


def collect(visible: str | None = None, timeout: float = DEFAULT_TIMEOUT_S) -> Facts:
    """Probe this machine. `visible` runs torch's probe with that CUDA_VISIBLE_DEVICES."""
    from gpudoctor.core.version import __version__

    # torch's child first: importing torch takes the longest, the rest runs meanwhile
    # (it may have been started before the CLI parsed its options: start_early).
    # NVML right after it, long before the child's torch is imported and could
    # hold a CUDA context that NVML would show as "memory held by another process".
    child = torch_child(visible, timeout)
    try:
        nvml = probe_nvml()
        environment = probe_environment()
        system = probe_system()
        host = probe_host()
        kernel_log = probe_kernel_log()
        software = probe_software()
        in_process = in_process_view()
        torch = child.result()
    finally:
        child.kill()
    return Facts(
        schema=SCHEMA,
        gpudoctor=__version__,
        collected_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        visible_override=visible,
        torch=torch,
        torch_in_process=in_process,
        nvml=nvml,
        environment=environment,
        system=system,
        host=host,
        kernel_log=kernel_log,
        software=software,
    )


def load(path: str | Path) -> Facts:
    """Facts from a saved `check --json` output (or a bare facts object).
    Raises SnapshotError with a one-line reason."""
    try:
        raw = read_capped(str(path), FACTS_CAP)  # never a device, a FIFO, or gigabytes
    except FileRefused as exc:
        raise SnapshotError(str(exc)) from None
    if not raw.strip():
        raise SnapshotError(f"{path}: empty file, not a gpudoctor facts snapshot (save one with: gpudoctor check --json > FILE)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}), not a facts snapshot") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SnapshotError(f"{path}: not JSON ({exc})") from None
    except RecursionError:  # a hostile file: thousands of nested brackets
        raise SnapshotError(f"{path}: JSON nested too deeply to read, not a facts snapshot") from None
    try:
        return Facts.from_dict(data)
    except SnapshotError as exc:
        other = data.get("command") if isinstance(data, dict) and "facts" not in data else None
        what = f"`gpudoctor {other} --json` output, not a facts snapshot" if isinstance(other, str) else f"not a gpudoctor facts snapshot ({exc})"
        raise SnapshotError(f"{path}: {what}; save one with: gpudoctor check --json > FILE") from None
