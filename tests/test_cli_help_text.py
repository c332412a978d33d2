"""Every word of every help string reaches `--help`: rich markup in a help string
(`[tool.gpudoctor.lint]` read as a style tag) silently ate text before."""

import re

import pytest
import typer
from typer.testing import CliRunner

from gpudoctor.cli.app import app

COMMAND = typer.main.get_command(app)
NAMES = sorted(COMMAND.commands)  # type: ignore[attr-defined]


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z0-9_.\-\[\]=/]+", text))


@pytest.mark.parametrize("name", NAMES)
def test_help_keeps_every_word(name, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # one help string a line, so no word is split by wrapping
    monkeypatch.setenv("NO_COLOR", "1")
    shown = CliRunner().invoke(app, [name, "--help"]).output
    command = COMMAND.commands[name]  # type: ignore[attr-defined]
    texts = [p.help for p in command.params if getattr(p, "help", None) and not getattr(p, "hidden", False)]
    missing = [(t, w) for t in texts for w in _words(t) if w not in _words(shown)]
    assert missing == [], missing


def test_no_config_help_names_the_section(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    shown = CliRunner().invoke(app, ["lint", "--help"]).output
    assert "Ignore [tool.gpudoctor.lint] in pyproject.toml" in shown
