"""The Python API, for notebooks and code that cannot be started under
`gpudoctor run`:

    with gpudoctor.watch(model) as doctor:
        loss = model(batch).sum()
    doctor.findings          # what the hooks saw inside the block

    print(gpudoctor.device_map(model))   # where every parameter and buffer lives

    with gpudoctor.watch(model, steps=True) as doctor:
        train(steps=100)
    doctor.steps             # where this process's step time went (docs/json.md, "steps")

    with gpudoctor.watch(model, ranks=True) as doctor:   # in every rank of a job
        train(steps=100)
    doctor.steps             # every rank's, and a straggler is one of doctor.findings

`watch` installs the same hooks as `gpudoctor run` (once per process; they
stay, cheap, after the block) and names modules from `model`. A device error
that leaves the block is explained in a note on the exception (Python >= 3.11
prints it under the traceback); warnings found in the block are issued as
Python warnings. The exception itself always propagates unchanged.

With `steps=True` the block's training steps are accounted for as under
`gpudoctor run` (hooks/step_clock.py): `doctor.steps` has this process's time
per step in each phase (its newest 128 steps). Those hooks then stay for the
process's life, a few microseconds a step. With `ranks=True` (steps implied)
every rank of the default process group must leave the block, as for any
collective: it all-gathers the ranks' accounting; `doctor.steps` has every rank,
and a straggler (or a slow link) is a finding.
"""

from __future__ import annotations

import warnings
from typing import Any, Literal

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.hooks.device_map import DeviceMap, device_map

__all__ = ["DeviceMap", "GpudoctorWarning", "Watch", "device_map", "watch"]


class GpudoctorWarning(UserWarning):
    """A problem the runtime hooks saw inside a `gpudoctor.watch()` block."""


class Watch:
    def __init__(self, model: Any = None, warn: bool = True, steps: bool = False, ranks: bool = False):
        self.model = model
        self.warn = warn
        self.ranks = ranks
        self.account = steps or ranks
        self.findings: list[Finding] = []
        self.steps: dict[str, Any] | None = None
        self._first_step = 0
        self._start = 0
        self._tallied_before: list = []

    def __enter__(self) -> "Watch":
        from gpudoctor.hooks.install import install_hooks
        from gpudoctor.hooks.session import session

        install_hooks()
        from gpudoctor.hooks import module_calls

        if self.model is not None:
            module_calls.attach(self.model)
        module_calls.watch.arm(refill=True)
        if self.account:
            self._first_step = _start_step_clock(self.model)
        self._start = len(session.facts)
        # Tallies (per sampler, per loader) are kept for the whole process: only
        # what changes inside the block is this block's.
        self._tallied_before = _tallies(session)
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        from gpudoctor.hooks import module_calls
        from gpudoctor.hooks.checks import runtime_findings
        from gpudoctor.hooks.post_mortem import explain_chain
        from gpudoctor.hooks.session import session

        if exc is not None:
            explain_chain(exc)
        facts = session.facts[self._start :] + [f for f in _tallies(session) if f not in self._tallied_before]
        self.findings = runtime_findings(facts)
        verdict = _step_verdict(self._first_step, self.ranks and exc is None) if self.account else None
        if verdict is not None:
            from gpudoctor.knowledge.stragglers import verdict_json

            self.steps = verdict_json(verdict)
            self.findings += verdict.findings
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


def _start_step_clock(model: Any) -> int:
    """The step clock (installed once), armed for `model`'s backward; the number of
    the first step of the block."""
    from gpudoctor.hooks import step_clock

    c = step_clock.clock() or step_clock.install(_rank())
    module = getattr(model, "module", None)
    if module is not None and type(model).__name__ == "DistributedDataParallel":
        step_clock.arm_model(c, module)  # a DDP built before the clock was: mark its last gradient
    return c.index


def _rank() -> int:
    try:
        import torch.distributed as dist

        return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0
    except Exception:  # noqa: BLE001
        return 0


def _step_verdict(first_step: int, gather: bool):
    from gpudoctor.knowledge.stragglers import analyze_steps
    from gpudoctor.hooks import step_clock

    c = step_clock.clock()
    if c is None:
        return None
    own = step_clock.since(c.summary(), first_step)
    ranks = [own]
    if gather:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            gathered: list[Any] = [None] * dist.get_world_size()
            dist.all_gather_object(gathered, step_clock.encode_steps(own))
            decoded = [step_clock.decode_steps(text, r) for r, text in enumerate(gathered)]
            ranks = [s for s in decoded if s is not None]
    return analyze_steps(ranks)


def _tallies(session) -> list:
    out = []
    for collect in session.collectors:
        try:
            out += collect()
        except Exception:  # noqa: BLE001
            pass
    return out


def watch(model: Any = None, warn: bool = True, steps: bool = False, ranks: bool = False) -> Watch:
    """A context manager that watches the code in its block (see the module docstring)."""
    return Watch(model, warn, steps, ranks)
