"""The `gpudoctor` command. Importing this module must stay cheap: no torch,
no pynvml here; each command imports what it needs inside its function."""

from __future__ import annotations

import sys

from gpudoctor.cli.early import bare_explain, before_cli, cli_ready

before_cli(sys.argv)  # before typer and rich are imported: see cli/early.py

import typer  # noqa: E402

from gpudoctor.core.version import __version__
from gpudoctor.cli import allreduce, check, diagnose, lint, report, run, train_smoke
from gpudoctor.core.exit_code import ExitCode
from gpudoctor.cli.output import UsageError
from gpudoctor.render.escape import terminal

# Typer >= 0.23 vendors click privately; older releases use the click package.
ClickUsageError: type[Exception] = typer.BadParameter.__mro__[1]

app = typer.Typer(
    name="gpudoctor",
    help="A doctor for PyTorch multi-GPU and distributed training.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"gpudoctor {__version__}")
        raise typer.Exit(ExitCode.OK)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """gpudoctor check | allreduce | train-smoke | lint | run | diagnose | report"""


for module in (check, allreduce, train_smoke, lint, run, diagnose, report):
    module.register(app)


def _tolerate_narrow_stdout() -> None:
    """A stdout that cannot encode ✓ or — (Windows' cp1252 when redirected to a file,
    PYTHONIOENCODING=ascii) shows "?" for them instead of ending in UnicodeEncodeError.
    stderr already does the like (Python gives it errors="backslashreplace")."""
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None and (sys.stdout.encoding or "").lower().replace("-", "") != "utf8":
        try:
            reconfigure(errors="replace")
        except (ValueError, OSError):  # a stream already written to in a way that forbids it
            pass


def main(argv: list[str] | None = None) -> None:
    cli_ready()
    _tolerate_narrow_stdout()
    argv = bare_explain(sys.argv[1:] if argv is None else argv)
    if not argv:
        argv = ["--help"]  # `gpudoctor` alone: the help, not an empty usage error
    try:
        code = app(args=argv, prog_name="gpudoctor", standalone_mode=False)
    except (ClickUsageError, UsageError) as exc:
        message = exc.format_message() if isinstance(exc, ClickUsageError) else str(exc)  # type: ignore[attr-defined]  # click's UsageError: known at run time only
        print(f"gpudoctor: error: {terminal(message, one_line=True)}", file=sys.stderr)  # it may name a crafted file
        sys.exit(ExitCode.USAGE)
    except (typer.Abort, KeyboardInterrupt):
        print("gpudoctor: interrupted", file=sys.stderr)
        sys.exit(ExitCode.INTERRUPTED)
    sys.exit(code if isinstance(code, int) else ExitCode.OK)
