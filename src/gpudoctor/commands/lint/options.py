"""What `gpudoctor lint` is asked to do, and the one check of it that both doors (the CLI,
gpudoctor.lint()) run: bad input is a UsageError with the CLI's text, before any file is
linted. The check also settles what the project's [tool.gpudoctor.lint] adds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from gpudoctor.core.usage import MissingPathError, UsageError

FORMATS = ("text", "json", "sarif", "github")


@dataclass(frozen=True, kw_only=True)
class Options:
    """Its defaults are the CLI's flags' and the Python API's (cli/lint.py, api.lint)."""

    paths: tuple[str, ...] = ()
    select: tuple[str, ...] = ()  # rule ids ("a,b" already split)
    extend_select: tuple[str, ...] = ()  # rule ids run beside the selected (or default) ones: opt-in advice
    ignore: tuple[str, ...] = ()
    format: str = "text"  # text | json | sarif | github
    json: bool = False  # --json: the same as --format json
    fail_on: str | None = None  # error | warning | never; None: the config's, else "error"
    exit_zero: bool = False
    config: bool = True  # read [tool.gpudoctor.lint] from pyproject.toml (the API does not)
    explain: str | None = None  # a rule id, or "all": a page instead of a lint
    # Filled in by validate(): the pyproject.toml section read, for its `exclude`.
    exclude_from: str = ""
    exclude: tuple[str, ...] = ()


def split_ids(values: Iterable[str]) -> tuple[str, ...]:
    """`--select a,b --select c` -> (a, b, c)."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def validate(options: Options) -> Options:
    """The options checked, with the config folded in: `select`, `ignore` and `fail_on`
    as the run uses them, `format` "json" for --json. Idempotent."""
    from gpudoctor.linter import config
    from gpudoctor.linter.engine import MissingPath, check_paths
    from gpudoctor.linter.rules import BY_ID

    known = ", ".join(BY_ID)
    if options.explain is not None:
        if options.explain not in ("", "all") and options.explain not in BY_ID:
            raise UsageError(f"unknown rule id {options.explain!r} (known: {known})")
        return options
    if options.format not in FORMATS:
        raise UsageError(f"unknown format {options.format!r}: choose one of {', '.join(FORMATS)}")
    if options.fail_on is not None and options.fail_on not in config.FAIL_ON:
        raise UsageError(f"unknown --fail-on {options.fail_on!r}: choose one of {', '.join(config.FAIL_ON)}")
    format = options.format
    if options.json:
        if format not in ("text", "json"):
            raise UsageError("choose one of --json and --format")
        format = "json"
    if not options.paths:
        raise UsageError("give at least one PATH to lint (or --explain ID)")
    try:
        settings = config.find(".") if options.config else config.LintConfig()
    except config.ConfigError as exc:
        raise UsageError(str(exc)) from None
    select = options.select or settings.select
    ignore = options.ignore + tuple(i for i in settings.ignore if i not in options.ignore)
    extend = options.extend_select + tuple(i for i in settings.extend_select if i not in options.extend_select)
    for rule_id in select + ignore + extend:
        if rule_id not in BY_ID:
            where = f" in {settings.path}" if rule_id in settings.select + settings.ignore + settings.extend_select else ""
            raise UsageError(f"unknown rule id {rule_id!r}{where} (known: {known})")
    if extend:  # the default rules (or the selected ones) and these: an opt-in rule without listing the rest
        from gpudoctor.linter.engine import choose_rules

        base = select or tuple(r.id for r in choose_rules())
        select = base + tuple(i for i in extend if i not in base)
    try:
        check_paths(options.paths)
    except MissingPath as exc:
        raise MissingPathError(str(exc)) from None
    fail_on = "never" if options.exit_zero else (options.fail_on or settings.fail_on or "error")
    return replace(
        options, select=select, extend_select=(), ignore=ignore, format=format, json=False, fail_on=fail_on, exit_zero=False,
        config=False, exclude_from=settings.path or options.exclude_from, exclude=settings.exclude or options.exclude,
    )  # fmt: skip
