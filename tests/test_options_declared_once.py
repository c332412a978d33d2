"""A command's options are declared once, in its options.py: the CLI's flags and the
Python API take their defaults from there, and every field is named where it is
built (keyword-only), so a field added in the middle cannot shift the others."""

import dataclasses
import inspect

import pytest
import typer

from gpudoctor import api
from gpudoctor.cli.app import app
from gpudoctor.commands.allreduce.options import Options as AllreduceOptions
from gpudoctor.commands.allreduce.options import Sweep
from gpudoctor.commands.check.options import Options as CheckOptions
from gpudoctor.commands.diagnose.options import Options as DiagnoseOptions
from gpudoctor.commands.lint.options import Options as LintOptions
from gpudoctor.commands.report.options import Options as ReportOptions
from gpudoctor.commands.run.options import Options as RunOptions
from gpudoctor.commands.train_smoke.config import SmokeConfig
from gpudoctor.commands.train_smoke.options import Options as SmokeOptions

COMMANDS = typer.main.get_command(app).commands  # type: ignore[attr-defined]

# command -> (its Options, {CLI parameter: the field it fills}, fields no flag fills).
# A flag or a field missing here fails the test: the table is the contract.
FLAGS = {
    "allreduce": (AllreduceOptions, {name: name for name in (
        "nproc", "backend", "device", "sizes", "min_bytes", "max_bytes", "dtype", "op", "iters", "warmup", "timeout",
        "bisect", "fault")}, set()),
    "check": (CheckOptions, {"facts_files": "facts", "visible": "visible", "timeout": "timeout"}, set()),
    "diagnose": (DiagnoseOptions, {"path": "path", "explain": "explain"}, {"text"}),  # text: the API's
    "lint": (LintOptions, {
        "paths": "paths", "select": "select", "extend_select": "extend_select", "ignore": "ignore", "format": "format", "json_out": "json",
        "fail_on": "fail_on", "exit_zero": "exit_zero", "no_config": "config", "explain": "explain",
    }, {"exclude_from", "exclude"}),  # filled in by validate() from pyproject.toml
    "report": (ReportOptions, {name: name for name in ("output", "nproc", "timeout", "skip", "html")}, set()),
    "run": (RunOptions, {name: name for name in (
        "target", "nproc", "json_file", "strict", "timeout", "hang_timeout", "trace", "html")}, set()),
    "train-smoke": (SmokeOptions, {name: name for name in (
        "nproc", "backend", "device", "steps", "batch_size", "num_workers", "amp", "save", "timeout", "compare_dp",
        "fault")}, set()),
}
# The flags of the output, not of the work: no Options field.
OUTPUT_FLAGS = {"json_out", "markdown", "strict", "csv_out", "verbose", "list_checks", "html"}  # allreduce's --html: the CLI's
INVERTED = {"no_config"}  # --no-config sets config=False


def _cli_default(param):
    default = param.default
    if param.multiple or param.nargs == -1:  # Typer's "not given" for a list is None or []
        return tuple(default or ())
    return default


@pytest.mark.parametrize("command", sorted(FLAGS))
def test_each_flag_defaults_to_its_options_field(command):
    options, flags, unflagged = FLAGS[command]
    params = {p.name: p for p in COMMANDS[command].params}
    fields = {f.name: f for f in dataclasses.fields(options)}
    assert set(params) - {"help"} <= set(flags) | OUTPUT_FLAGS, set(params) - set(flags) - OUTPUT_FLAGS
    assert set(flags) <= set(params), set(flags) - set(params)
    assert set(flags.values()) | unflagged == set(fields), set(fields) - set(flags.values()) - unflagged
    for name, field in flags.items():
        default = _cli_default(params[name])
        expected = not fields[field].default if name in INVERTED else fields[field].default
        assert default == expected, (command, name, default, expected)


@pytest.mark.parametrize(
    "function, options",
    [
        (api.check, CheckOptions),
        (api.lint, LintOptions),
        (api.diagnose, DiagnoseOptions),
        (api.allreduce, AllreduceOptions),
        (api.train_smoke, SmokeOptions),
    ],
)
def test_the_api_defaults_are_the_options_defaults(function, options):
    fields = {f.name: f.default for f in dataclasses.fields(options)}
    compared = 0
    for name, param in inspect.signature(function).parameters.items():
        if param.default is inspect.Parameter.empty or name not in fields:
            continue
        compared += 1
        if name == "nproc":  # the API's own: a number, not the CLI's None (docs/api.md)
            assert param.default == 2 and fields["nproc"] is None
        elif name == "facts":  # one snapshot path, or None: Options.facts ()
            assert param.default is None and fields["facts"] == ()
        else:
            assert param.default == fields[name], (name, param.default, fields[name])
    assert compared >= 1


@pytest.mark.parametrize(
    "cls", [AllreduceOptions, CheckOptions, DiagnoseOptions, LintOptions, ReportOptions, RunOptions, SmokeOptions, Sweep, SmokeConfig]
)
def test_options_are_built_by_keyword_only(cls):
    assert all(f.kw_only for f in dataclasses.fields(cls))
    first = dataclasses.fields(cls)[0]
    with pytest.raises(TypeError, match="positional"):
        cls(first.default if first.default is not dataclasses.MISSING else 1)
