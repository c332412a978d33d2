"""The Python API, for notebooks and code that cannot be started under
`gpudoctor run`:

    with gpudoctor.watch(model) as doctor:
        loss = model(batch).sum()
    doctor.findings          # what the hooks saw inside the block

    print(gpudoctor.device_map(model))   # where every parameter and buffer lives

`watch` installs the same hooks as `gpudoctor run` (once per process; they
stay, cheap, after the block) and names modules from `model`. A device error
that leaves the block is explained in a note on the exception (Python >= 3.11
prints it under the traceback); warnings found in the block are issued as
Python warnings. The exception itself always propagates unchanged.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from gpudoctor.findings import Finding, Report, Severity
from gpudoctor.runtime.device_map import DeviceMap, device_map

__all__ = ["DeviceMap", "GpudoctorWarning", "Watch", "device_map", "watch"]


class GpudoctorWarning(UserWarning):
    """A problem the runtime hooks saw inside a `gpudoctor.watch()` block."""


class Watch:
    def __init__(self, model: Any = None, warn: bool = True):
        self.model = model
        self.warn = warn
        self.findings: list[Finding] = []
        self._start = 0
        self._tallied_before: list = []

    def __enter__(self) -> "Watch":
        from gpudoctor.runtime.install import install_hooks
        from gpudoctor.runtime.session import session

        install_hooks()
        from gpudoctor.runtime import module_calls

        if self.model is not None:
            module_calls.attach(self.model)
        module_calls.watch.arm(refill=True)
        self._start = len(session.facts)
        # Tallies (per sampler, per loader) are kept for the whole process: only
        # what changes inside the block is this block's.
        self._tallied_before = _tallies(session)
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        from gpudoctor.runtime import module_calls
        from gpudoctor.runtime.checks import runtime_findings
        from gpudoctor.runtime.post_mortem import explain_chain
        from gpudoctor.runtime.session import session

        if exc is not None:
            explain_chain(exc)
        facts = session.facts[self._start :] + [f for f in _tallies(session) if f not in self._tallied_before]
        self.findings = runtime_findings(facts)
        if self.model is not None:
            module_calls.detach(self.model)
        if exc is not None and hasattr(exc, "add_note"):
            for f in self.findings:
                if f.id == "device-mismatch":
                    exc.add_note(f"gpudoctor: {f.title}\n  fix: {f.fix}")
        elif self.warn:
            for f in self.findings:
                if f.severity in (Severity.WARN, Severity.ERROR):
                    warnings.warn(f"{f.title} [{f.id}] — fix: {f.fix}", GpudoctorWarning, stacklevel=2)
        return False  # never swallow the exception

    def report(self) -> Report:
        return Report("run", tuple(self.findings))


def _tallies(session) -> list:
    out = []
    for collect in session.collectors:
        try:
            out += collect()
        except Exception:  # noqa: BLE001
            pass
    return out


def watch(model: Any = None, warn: bool = True) -> Watch:
    """A context manager that watches the code in its block (see the module docstring)."""
    return Watch(model, warn)
