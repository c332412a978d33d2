"""render/console.py Indented: a finding's line that a terminal wraps keeps its indent;
in a log (soft wrap) it is not wrapped at all."""

import io

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.render.console import print_report
from gpudoctor.render.terminal import make_console

LONG = Finding(
    "x-y", Severity.WARN, "short title", {"path": "/a/" * 30},
    why="because " * 12, fix="pip install something --with a very long line of options here",
)  # fmt: skip


def _draw(width: int) -> list[str]:
    buf = io.StringIO()
    print_report(make_console(file=buf, tty=False, width=width), Report("check", (LONG,)))
    return buf.getvalue().splitlines()


def test_wrapped_lines_keep_their_indent():
    lines = _draw(50)
    start = next(i for i, line in enumerate(lines) if line.startswith("      why: "))
    continued = lines[start + 1]
    assert continued.startswith("      because") and not continued.startswith("       ")
    fix = next(i for i, line in enumerate(lines) if line.startswith("      fix: "))
    assert lines[fix + 1].startswith("      ") and lines[fix + 1].strip().startswith("long line")
    assert all(len(line.rstrip()) <= 50 for line in lines)


def test_a_line_that_fits_is_drawn_as_it_was():
    lines = _draw(400)
    assert "      fix: pip install something --with a very long line of options here" in lines
    assert not any(line.startswith("      because") for line in lines)
