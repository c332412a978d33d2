"""`gpudoctor lint`: the command around the static engine (linter/).

    run(options)      the lint, for the CLI and gpudoctor.lint() alike: a Report
    rendered()        the Report as --format text, sarif or github prints it
    failed()          whether it fails under --fail-on / --exit-zero (exit 1)
    explain(options)  a rule's page, or the list of rules
    options.py        Options and their one check (UsageError, the CLI's text)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpudoctor.commands.lint.options import Options
    from gpudoctor.core.findings import Report


def run(options: Options, *, progress: Callable[[str], None] | None = None) -> Report:
    """Lint the paths: one finding per diagnostic, `data["diagnostics"]` as `--json`
    prints them. `progress(line)` hears a warning when the paths hold no Python file
    (a mistyped folder in CI would otherwise pass as clean, every time)."""
    from gpudoctor.commands.lint.options import validate
    from gpudoctor.core.usage import MissingPathError
    from gpudoctor.linter import engine, formats
    from gpudoctor.linter.config import LintConfig

    options = validate(options)
    exclude = LintConfig(options.exclude_from, exclude=options.exclude).excluded if options.exclude else None
    try:
        result = engine.lint_paths(list(options.paths), options.select, options.ignore, exclude=exclude)
    except engine.MissingPath as exc:  # gone since validate() looked
        raise MissingPathError(str(exc)) from None
    if result.files == 0 and progress is not None:
        # A config's exclude (a parent folder's `exclude = ["*"]`) may be why: name it.
        why = f"; exclude = {list(options.exclude)!r} in {options.exclude_from} applies" if options.exclude else ""
        progress(f"gpudoctor lint: warning: no Python files under {', '.join(options.paths)} (nothing was checked{why})")
    return formats.report(result)


def rendered(options: Options, report: Report) -> str:
    """The report as --format text, sarif or github prints it (json: the shared --json)."""
    from gpudoctor.commands.lint.options import validate
    from gpudoctor.linter import formats

    result = formats.result_of(report)
    chosen = validate(options).format
    if chosen == "sarif":
        return formats.sarif(result)
    if chosen == "github":
        return formats.github(result)
    if chosen == "text":
        return formats.text(result)
    raise ValueError(f"--format {chosen}: printed as the shared JSON report (render/json_out.py)")


def failed(options: Options, report: Report) -> bool:
    """Whether the lint fails (exit 1) under the options' --fail-on / --exit-zero."""
    from gpudoctor.commands.lint.options import validate
    from gpudoctor.linter.formats import result_of

    return result_of(report).failed(validate(options).fail_on or "error")


def explain(options: Options) -> str:
    """`--explain ID`: the rule's page; `--explain all` (or a bare --explain): the list of rules."""
    from gpudoctor.commands.lint.options import validate
    from gpudoctor.linter.explain import rule_list, rule_page
    from gpudoctor.linter.rules import BY_ID

    rule_id = validate(options).explain
    return rule_list() if rule_id in (None, "", "all") else rule_page(BY_ID[rule_id])
