"""Untrusted text reaches the terminal and Markdown shown, never raw (issue 24, item 4):
OSC 52 (clipboard), title changes, hidden OSC 8 links, bidi overrides, a backtick or
raw HTML in a log line."""

from __future__ import annotations

import os
import subprocess
import sys

from gpudoctor.core.findings import Finding, Report, Severity
from gpudoctor.render.escape import md_code, md_text, terminal
from gpudoctor.render.markdown import report_markdown

HOSTILE = (
    "RuntimeError: CUDA error: out of memory "
    "\x1b]52;c;cm0gLXJmIH4=\x07 \x1b]0;pwned\x07 \x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\ "
    "\x9b31m \u202eevil\u202c `x` <img src=x onerror=alert(1)> [a](http://e)"
)


def test_terminal_shows_every_control_character():
    shown = terminal("a\x1b[2Jb\x07c\x7fd\x9be\u202ef\rg\th\ni")
    assert shown == "a\\x1b[2Jb\\x07c\\x7fd\\x9be\\u202ef\\rg\th\ni"
    assert terminal("x\ny", one_line=True) == "x\\ny"
    assert terminal("plain ünïcode") == "plain ünïcode"


def test_markdown_text_and_code_cannot_be_broken_out_of():
    assert md_text("<b>`x`</b> [a](b) | c") == "\\<b\\>\\`x\\`\\</b\\> \\[a\\](b) \\| c"
    assert md_code("a `b` c") == "``a `b` c``"
    assert md_code("``x") == "``` ``x ```"
    finding = Finding("x", Severity.ERROR, "t <script>", {"log": "a\n# heading\n<script>alert(1)</script>\n```"}, "w", "f ```", "a")
    md = report_markdown(Report("diagnose", (finding,)))
    # the traceback is in a fence longer than any backtick run in it, indented under its list item
    assert "  ````\n  a\n  # heading\n  <script>alert(1)</script>\n  ```\n  ````" in md
    assert "\\<script\\>" in md and "````\nf ```\n````" in md


def run_cli(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpudoctor", *args], capture_output=True, timeout=120, cwd=cwd)


def test_diagnose_prints_a_hostile_log_line_escaped(tmp_path):
    log = tmp_path / "rank0.log"
    log.write_text("step 1\n" + HOSTILE + "\n")
    for extra in ((), ("--markdown",)):
        proc = run_cli("diagnose", *extra, str(log))
        out = proc.stdout.decode()
        assert proc.returncode == 1, proc.stderr.decode()
        assert "\x1b" not in out and "\x9b" not in out and "\u202e" not in out, repr(out)
        assert "\\x1b]52;" in out and "\\u202e" in out
    md = run_cli("diagnose", "--markdown", str(log)).stdout.decode()
    assert all(line.startswith("- **log**: ``line 2") for line in md.splitlines() if "<img" in line)  # in a code span only
    assert "``line 2: RuntimeError" in md  # the span's fence is longer than the log's backtick


def test_a_crafted_file_name_is_shown_escaped(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "rank0.log").write_text("step 1\n")
    (run / "core\x1b]0;pwned\x07.bin").write_bytes(bytes(range(256)) * 8)
    proc = run_cli("diagnose", str(run))
    out = proc.stdout.decode()
    assert "\x1b" not in out and "\\x1b]0;pwned" in out, repr(out)
    proc = run_cli("diagnose", str(tmp_path / "gone\x1b]0;x\x07.log"))
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "\x1b" not in err and "\\x1b]0;x" in err


def test_lint_text_and_github_show_crafted_names_escaped(tmp_path):
    src = tmp_path / "train\x1b]52;c;eA==\x07.py"
    src.write_text(
        "import torch.distributed as dist\n"
        "def step(rank, t):\n"
        "    if rank == 0:\n"
        "        dist.all_reduce(t)\n"
    )
    for fmt in ("text", "github"):
        proc = run_cli("lint", "--format", fmt, os.path.basename(src), cwd=str(tmp_path))
        out = proc.stdout.decode()
        assert proc.returncode == 1, out + proc.stderr.decode()
        assert "\x1b" not in out and "\\x1b]52" in out, repr(out)
