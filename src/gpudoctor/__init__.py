"""gpudoctor: a doctor for PyTorch multi-GPU and distributed training.

The Python API (docs/api.md): `gpudoctor.check()`, `gpudoctor.lint(paths)`, ...
each return the Report the CLI renders. `import gpudoctor` stays cheap (no torch,
no rich): every name below is imported on first use.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (it is not free)

from gpudoctor.core.version import __version__

if TYPE_CHECKING:
    from gpudoctor.api import allreduce as allreduce
    from gpudoctor.api import check as check
    from gpudoctor.api import diagnose as diagnose
    from gpudoctor.api import lint as lint
    from gpudoctor.api import train_smoke as train_smoke
    from gpudoctor.core.findings import Finding as Finding
    from gpudoctor.core.findings import Report as Report
    from gpudoctor.core.findings import Severity as Severity
    from gpudoctor.hooks.watch import device_map as device_map
    from gpudoctor.hooks.watch import watch as watch

__all__ = ["__version__", "check", "allreduce", "train_smoke", "lint", "diagnose", "Report", "Finding", "Severity", "watch", "device_map"]


def __getattr__(name: str):
    if name in ("check", "allreduce", "train_smoke", "lint", "diagnose"):
        from gpudoctor import api

        return getattr(api, name)
    if name in ("Report", "Finding", "Severity"):
        from gpudoctor.core import findings

        return getattr(findings, name)
    # The runtime API imports torch.
    if name in ("watch", "device_map"):
        from gpudoctor.hooks import watch as runtime_api

        return getattr(runtime_api, name)
    raise AttributeError(f"module 'gpudoctor' has no attribute {name!r}")
