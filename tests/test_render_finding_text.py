"""A rank's report (render/run_text.py) is drawn without rich, so the user's
process never imports it; what it prints must be what rich drew before, byte for
byte: the same findings drawn both ways, on and off a terminal, under the
environments rich reads (TERM, COLORTERM, NO_COLOR)."""

import io

import pytest

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.render.console import finding_lines
from gpudoctor.render.escape import Shown
from gpudoctor.render.run_text import findings_lines
from gpudoctor.render.terminal import make_console

FINDINGS = [
    Finding("all-good", Severity.OK, "NCCL found", {"version": "2.21"}),
    Finding("note", Severity.INFO, "two ranks on one host", {"ranks": [0, 1], "host": None, "env": {}}),
    Finding(
        "sampler-without-set-epoch",
        Severity.WARN,
        "DistributedSampler iterated 2 times, always with epoch 0",
        {"rank": 0, "line": "for x in loader:", "empty": [], "map": {"a": 1, "b": [2, 3]}},
        why="A shuffling sampler repeats one permutation.",
        fix="sampler.set_epoch(epoch)",
    ),
    Finding(
        "uncaught-error",
        Severity.ERROR,
        "a rank's own text: \x1b]52;c;aGk=\x07 bell\x07 cr\r tab\tend \u202e bidi \x9b c1",
        {"error": "Traceback:\n\tFile 'x.py', line 3\n  \x1b[31mred\x1b[0m\x0b\x0c\x08", "wide": "漢字\tafter", "": ""},
        why="two\nlines",
        fix="pip install 'x\ty'",
    ),
    Finding("no-evidence", Severity.ERROR, "", {}, why="", fix="just a fix"),
]


def _rich(findings, tty):
    """What render/run_text.py drew with rich before: one console at width 10 000."""
    buf = io.StringIO()
    console = make_console(file=buf, tty=tty, width=10_000)
    for f in findings:
        console.print(Shown(finding_lines(f)))
    return buf.getvalue().rstrip("\n").splitlines()


@pytest.mark.parametrize("tty", [False, True])
@pytest.mark.parametrize(
    "env",
    [
        {"TERM": "xterm"},
        {"TERM": "xterm-256color"},
        {"TERM": "xterm", "COLORTERM": "truecolor"},
        {"TERM": "xterm", "NO_COLOR": "1"},
        {"TERM": "dumb"},
        {"TERM": "unknown", "NO_COLOR": "1"},
    ],
)
def test_plain_report_is_what_rich_draws(monkeypatch, tty, env):
    for name in ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # On a dumb terminal rich draws no styles but wraps at 80 columns whatever the
    # width asked, which cut a prefixed line in two: drawn as off a terminal instead.
    dumb = env["TERM"] in ("dumb", "unknown")
    for f in FINDINGS:
        assert findings_lines([f], tty) == _rich([f], tty and not dumb), f.id
    assert findings_lines(FINDINGS, tty) == _rich(FINDINGS, tty and not dumb)


def test_colour_is_there_on_a_terminal_only(monkeypatch):
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NO_COLOR", raising=False)
    on = "\n".join(findings_lines(FINDINGS[2:3], True))
    off = "\n".join(findings_lines(FINDINGS[2:3], False))
    assert "\x1b[1;33m  ! \x1b[0m" in on and "\x1b" not in off
    # The rank's own escape sequences are shown, never sent: only the report's own colour is raw.
    hostile = "\n".join(findings_lines(FINDINGS[3:4], True))
    assert "\\x1b]52;c;aGk=" in hostile and "\x1b]" not in hostile and "\x07" not in hostile
