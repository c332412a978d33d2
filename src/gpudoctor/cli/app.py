"""The `gpudoctor` command. Importing this module must stay cheap: no torch,
no pynvml here; each command imports what it needs inside its function."""

from __future__ import annotations

import sys

import typer

from gpudoctor import __version__
from gpudoctor.cli import allreduce, check, lint, run, train_smoke
from gpudoctor.cli.output import EXIT_USAGE, UsageError

# Typer >= 0.23 vendors click privately; older releases use the click package.
ClickUsageError = typer.BadParameter.__mro__[1]

app = typer.Typer(
    name="gpudoctor",
    help="A doctor for PyTorch multi-GPU and distributed training.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"gpudoctor {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    """gpudoctor check | allreduce | train-smoke | lint | run"""


for module in (check, allreduce, train_smoke, lint, run):
    module.register(app)


def main(argv: list[str] | None = None) -> None:
    try:
        code = app(args=argv, prog_name="gpudoctor", standalone_mode=False)
    except (ClickUsageError, UsageError) as exc:
        message = exc.format_message() if isinstance(exc, ClickUsageError) else str(exc)
        print(f"gpudoctor: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)
    except (typer.Abort, KeyboardInterrupt):
        print("gpudoctor: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
