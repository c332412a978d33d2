"""`gpudoctor report`: check, a short allreduce and a short train-smoke, written
as one Markdown file to attach to a bug report (what people paste instead of
torch's collect_env). A step that fails is a section saying so; the file is
always written.

    run(options)  the command: the steps, then the file (commands/report is the one
                  command made of others: tests/test_layers.py's COMPOSES)
    options.py    Options and their one check (UsageError, the CLI's text)
    steps.py      the steps, each run to a StepResult whatever happens inside it
    document.py   StepResults -> the Markdown file (collapsible sections)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.commands.report.options import Options
    from gpudoctor.commands.report.steps import StepResult


@dataclass(frozen=True)
class Written:
    path: str  # the file, ~ expanded
    results: list[StepResult]
    error: str = ""  # why the file could not be written after all ("" when it was)
    html_error: str = ""  # the same for --html FILE


def run(options: Options, *, progress: Callable[[str], None] | None = None) -> Written:
    """Every step not skipped, then the document. `progress(name)` as each step starts."""
    from pathlib import Path

    from gpudoctor.commands.report.document import document
    from gpudoctor.commands.report.options import validate
    from gpudoctor.commands.report.steps import STEP_NAMES, plan, run_steps
    from gpudoctor.core.user_file import output_error, write_output

    options = validate(options)
    target = str(Path(options.output).expanduser())
    steps = [s for s in plan(options.nproc, options.timeout) if s.name not in options.skip]
    results = run_steps(steps, on_start=lambda step: progress(step.name) if progress else None)
    skipped = [name for name in STEP_NAMES if name in options.skip]  # in the steps' order
    try:
        write_output(target, document(results, skipped=skipped))
    except OSError as exc:
        return Written(target, results, output_error(target, exc))
    if options.html:
        from gpudoctor.render.html_page import Part, write_page

        parts = [Part(f"gpudoctor {r.name}", r.report, r.error) for r in results]
        return Written(target, results, html_error=write_page(options.html, parts, "gpudoctor report"))
    return Written(target, results)
