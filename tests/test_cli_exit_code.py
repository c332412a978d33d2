"""Exit codes are chosen in cli/ only, from data, and consoles are made in render/ only."""

from __future__ import annotations

import io
import pathlib
import re

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.render.run_text import findings_text
from gpudoctor.render.terminal import make_console

SRC = pathlib.Path(__file__).resolve().parents[1] / "src" / "gpudoctor"
LITERAL_EXIT = re.compile(r"^\s*(raise\s+)?(sys\.exit|os\._exit|typer\.Exit)\(\s*\d")


def _sources(skip: str = ""):
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("lint/rules/") or (skip and rel.startswith(skip)):
            continue  # lint rules quote user code in their examples
        yield rel, path.read_text()


def test_no_literal_exit_numbers_in_src():
    hits = [f"{rel}:{n}" for rel, text in _sources() for n, line in enumerate(text.splitlines(), 1) if LITERAL_EXIT.search(line)]
    assert hits == []


def test_no_exit_decision_by_finding_id():
    hits = [rel for rel, text in _sources() if re.search(r"""==\s*["']launch-interrupted["']""", text)]
    assert hits == []


def test_consoles_are_made_in_render_only():
    hits = [rel for rel, text in _sources(skip="render/") if re.search(r"\bConsole\(", text)]
    assert hits == []


def test_console_factory_honours_no_color_and_non_tty(monkeypatch):
    warn = Finding("x-y", Severity.WARN, "careful", fix="do it")
    monkeypatch.delenv("NO_COLOR", raising=False)
    buf = io.StringIO()
    make_console(file=buf, tty=True).print("[red]red[/red]")
    assert "\x1b[" in buf.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    buf = io.StringIO()
    make_console(file=buf, tty=True).print("[red]red[/red]")
    assert "\x1b[" not in buf.getvalue() and "red" in buf.getvalue()
    monkeypatch.delenv("NO_COLOR")
    buf = io.StringIO()
    make_console(file=buf).print("[red]red[/red]")  # a buffer is not a terminal
    assert buf.getvalue() == "red\n"
    # pytest captures stderr: not a terminal, so the run report is plain text.
    text = findings_text([warn], "gpudoctor run: 0 error(s), 1 warning(s) in t.py", prefix="[rank 1] ")
    assert "\x1b[" not in text
    assert all(line.startswith("[rank 1] ") for line in text.splitlines())
    assert "[rank 1]       fix: do it" in text.splitlines()
