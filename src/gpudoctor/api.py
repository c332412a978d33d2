"""The Python API: each command as a function that returns the Report the CLI
renders (`report.ok`, `report.findings` with id, severity, title, evidence, why,
fix; `report.data` holds what `--json` adds). For notebooks and scripts; a
Report shows itself as Markdown in Jupyter. Documented in docs/api.md.

    import gpudoctor
    report = gpudoctor.check()
    if not report.ok:
        for f in report.findings: print(f.id, f.fix)

Nothing is printed and nothing exits. An argument of the wrong type raises TypeError,
a bad value ValueError (the CLI's usage errors, naming its flags), a missing path
FileNotFoundError. Importing this module is cheap:
every command imports what it needs (torch too) when called. The defaults are the
commands' own (each command's options.py), which the CLI's flags read too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Union

# What a Report shows beyond its findings, as `--markdown` shows it (commands/__init__.py).
from gpudoctor.commands import BY_COMMAND, markdown, markdown_sections  # noqa: F401 - re-exported
from gpudoctor.commands.allreduce.options import DEFAULT_CPU_NPROC
from gpudoctor.commands.allreduce.options import Options as AllreduceOptions
from gpudoctor.commands.check.options import Options as CheckOptions
from gpudoctor.commands.lint.options import Options as LintOptions
from gpudoctor.commands.train_smoke.options import DEFAULT_NPROC
from gpudoctor.commands.train_smoke.options import Options as SmokeOptions
from gpudoctor.core.findings import Report

StrPath = Union[str, "os.PathLike[str]"]


# -- the API's door: arguments checked before any work, with the CLI's flag names --------
# The CLI's parser hands over values of the right type; a Python caller may not (True is an
# int, a str is an iterable of characters), so the type is checked here; the ranges and
# choices are then checked by the same functions the CLI uses (one_of, nproc_problem, ...).


def _whole(flag: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{flag} must be a whole number (got {value!r})")
    return value


def _seconds(flag: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{flag} must be a number of seconds (got {value!r})")
    return float(value)


def _word(flag: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{flag} must be a string (got {value!r})")
    return value


def _switch(flag: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{flag} must be True or False (got {value!r})")
    return value


def _path(what: str, value: Any) -> str:
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{what} must be a path (str or os.PathLike), got {type(value).__name__}")
    path = os.fspath(value)
    if not isinstance(path, str):
        raise TypeError(f"{what} must be a str path, got {type(path).__name__}")
    if "\x00" in path:
        raise ValueError(f"{what} {path!r} holds a NUL byte, which no file name can")
    return path


def _ids(flag: str, value: Any) -> list[str]:
    """Rule ids: one id as a string, or an iterable of them ("a,b" is split as the CLI splits it)."""
    if isinstance(value, str):
        value = [value]
    try:
        items = list(value)
    except TypeError:
        raise TypeError(f"{flag} must be a rule id or a list of them (got {value!r})") from None
    if not all(isinstance(v, str) for v in items):
        raise TypeError(f"{flag} must be a rule id or a list of them (got {value!r})")
    return [part.strip() for v in items for part in v.split(",") if part.strip()]


def check(*, visible: str | None = CheckOptions.visible, facts: StrPath | None = None) -> Report:
    """`gpudoctor check`: probe this machine (or read a snapshot saved with
    `gpudoctor check --json`) and run every check. `visible` shows what torch
    would see with CUDA_VISIBLE_DEVICES set to it."""
    from gpudoctor.commands.check import run

    if visible is not None:
        _word("--visible", visible)
    snapshots = (_path("--facts", facts),) if facts is not None else CheckOptions.facts
    return _shown(run(CheckOptions(facts=snapshots, visible=visible)))  # the CLI's door: its checks (UsageError, a ValueError) and its run


def lint(
    paths: StrPath | Iterable[StrPath],
    *,
    select: Iterable[str] = LintOptions.select,
    ignore: Iterable[str] = LintOptions.ignore,
    extend_select: Iterable[str] = LintOptions.extend_select,
) -> Report:
    """`gpudoctor lint`: one finding per diagnostic (id = the rule, evidence =
    path, line, col); `report.data["diagnostics"]` has them as `--json` does."""
    from gpudoctor.commands import lint as command

    if isinstance(paths, (str, os.PathLike)):
        names = [_path("path", paths)]
    else:
        try:
            names = [_path("path", p) for p in paths]
        except TypeError:
            if isinstance(paths, Iterable):
                raise
            raise TypeError(f"paths must be a path or a list of paths, got {type(paths).__name__}") from None
    # No pyproject.toml is read: a script's call says everything (config=False).
    options = LintOptions(
        paths=tuple(names), select=tuple(_ids("--select", select)), ignore=tuple(_ids("--ignore", ignore)),
        extend_select=tuple(_ids("--extend-select", extend_select)), config=False,
    )
    return _shown(command.run(options))  # a UsageError (ValueError; FileNotFoundError for a missing path)


def diagnose(text: str | None = None, *, path: StrPath | None = None) -> Report:
    """`gpudoctor diagnose`: a training log (`text`, e.g. a paste) or a log file or
    run folder (`path`) -> the first failure, what it caused, and the fix.
    `report.data["root_cause"]` names the first failing rank and node."""
    from gpudoctor.commands import diagnose as command
    from gpudoctor.commands.diagnose.options import Options

    if text is not None and not isinstance(text, (str, bytes)):
        raise TypeError(f"text must be the log's text (str or bytes), got {type(text).__name__}; for a file use path=")
    raw = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    where = _path("path", path) if path is not None else None
    # A UsageError (a ValueError; for a path that is not there, a FileNotFoundError too).
    return _shown(command.run(Options(path=where, text=raw)))


def allreduce(
    nproc: int | None = DEFAULT_CPU_NPROC,  # the API's own: 2, not the CLI's None (one rank per GPU)
    *,
    backend: str = AllreduceOptions.backend,
    device: str = AllreduceOptions.device,
    sizes: str | None = AllreduceOptions.sizes,
    dtype: str = AllreduceOptions.dtype,
    op: str = AllreduceOptions.op,
    iters: int = AllreduceOptions.iters,
    warmup: int = AllreduceOptions.warmup,
    timeout: float = AllreduceOptions.timeout,
) -> Report:
    """`gpudoctor allreduce`: start `nproc` ranks on this machine (None: one per
    GPU, else 2), sweep `op` over `sizes` ("4K,1M"; default 4K to 64M), check every
    result and time it. `report.data["results"]` holds the rows (busbw, ...)."""
    from gpudoctor.commands.allreduce import run

    if nproc is not None:
        _whole("--nproc", nproc)
    for flag, value in (("--backend", backend), ("--device", device), ("--dtype", dtype), ("--op", op)):
        _word(flag, value)
    if sizes is not None:
        _word("--sizes", sizes)
    _whole("--iters", iters), _whole("--warmup", warmup), _seconds("--timeout", timeout)
    options = AllreduceOptions(
        nproc=nproc, backend=backend, device=device, sizes=sizes, dtype=dtype, op=op, iters=iters, warmup=warmup, timeout=timeout
    )
    return _shown(run(options))  # the CLI's door: its checks (UsageError, a ValueError) and its run


def train_smoke(
    nproc: int = DEFAULT_NPROC,  # the API's own: a number, not the CLI's None (a torchrun job's ranks)
    *,
    backend: str = SmokeOptions.backend,
    device: str = SmokeOptions.device,
    steps: int | None = SmokeOptions.steps,
    batch_size: int = SmokeOptions.batch_size,
    num_workers: int = SmokeOptions.num_workers,
    amp: bool = SmokeOptions.amp,
    timeout: float = SmokeOptions.timeout,
    save: StrPath | None = SmokeOptions.save,
) -> Report:
    """`gpudoctor train-smoke`: a small reference DDP job on `nproc` ranks, verified
    (sharding, learning, synchronisation, gradient averaging, checkpoint, throughput).
    `steps` None: 200, or the fewest the global batch needs; `save` keeps rank 0's checkpoint."""
    from gpudoctor.commands.train_smoke import run

    for flag, value in (("--nproc", nproc), ("--batch-size", batch_size), ("--num-workers", num_workers)):
        _whole(flag, value)
    if steps is not None:
        _whole("--steps", steps)
    _word("--backend", backend), _word("--device", device), _switch("--amp", amp), _seconds("--timeout", timeout)
    where = _path("--save", save) if save is not None else None
    options = SmokeOptions(
        nproc=nproc, backend=backend, device=device, steps=steps, batch_size=batch_size, num_workers=num_workers, amp=amp,
        save=where, timeout=timeout,
    )
    return _shown(run(options))  # the CLI's door: its checks (UsageError, a ValueError) and its run


class NotebookReport(Report):
    """The Report the API returns: the same fields and methods, and Jupyter shows
    it as its `--markdown` report."""

    def _repr_markdown_(self) -> str:
        return markdown(self)


def _shown(report: Report) -> NotebookReport:
    return NotebookReport(report.command, report.findings, report.data, report.interrupted)
