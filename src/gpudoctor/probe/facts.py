"""The whole snapshot `check` diagnoses: one frozen Facts, collected here or
read back from a file saved with `gpudoctor check --json`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpudoctor.probe.codec import SnapshotError, from_plain, to_plain
from gpudoctor.probe.environment import EnvironmentFacts, probe_environment
from gpudoctor.probe.nvml import NvmlFacts, probe_nvml
from gpudoctor.probe.system import SystemFacts, probe_system
from gpudoctor.probe.torch_info import (
    DEFAULT_TIMEOUT_S,
    InProcessTorch,
    TorchChild,
    TorchFacts,
    in_process_view,
)

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
    from gpudoctor import __version__

    # NVML first: while torch's child runs, its own CUDA context would show up
    # as "memory held by another process".
    nvml = probe_nvml()
    child = TorchChild(visible, timeout)  # importing torch takes the longest: run the rest meanwhile
    try:
        environment = probe_environment()
        system = probe_system()
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
    )


def load(path: str | Path) -> Facts:
    """Facts from a saved `check --json` output (or a bare facts object).
    Raises SnapshotError with a one-line reason."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SnapshotError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"{path}: cannot read ({type(exc).__name__}: {exc})") from None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise SnapshotError(f"{path}: not JSON ({exc})") from None
    try:
        return Facts.from_dict(data)
    except SnapshotError as exc:
        raise SnapshotError(f"{path}: not a gpudoctor facts snapshot ({exc})") from None
