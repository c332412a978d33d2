"""The stderr report of `gpudoctor run`: plain lines, every one prefixed (e.g.
"[rank 1] "), each finding the way `gpudoctor check` shows it. Written in the
user's own process (a rank, a spawned child), so without rich."""

from __future__ import annotations

import sys

from gpudoctor.core.findings import Finding, Severity
from gpudoctor.render.escape import terminal
from gpudoctor.render.finding_text import colour_codes, finding_pieces, plain_line


def findings_text(findings: list[Finding], header: str, prefix: str = "") -> str:
    """A header line, then each finding; colour only when stderr is a terminal."""
    lines = [terminal(header)] + findings_lines(findings, sys.stderr.isatty())
    return "".join(f"{prefix}{line.rstrip()}\n" for line in lines)


def findings_lines(findings: list[Finding], tty: bool) -> list[str]:
    """Each finding's lines, as rich would draw them (tests/test_render_finding_text.py)
    but never wrapped: a prefixed, wrapped line would lose its prefix. A rank's error
    text is shown, never sent to the terminal (plain_line escapes it)."""
    codes = colour_codes(tty)
    text = "".join(plain_line(line, codes) + "\n" for f in findings for line in finding_pieces(f))
    return text.rstrip("\n").splitlines()


def header_line(findings: list[Finding], what: str, ended: str = "") -> str:
    """`ended` says how a script that did not finish cleanly ended (e.g. "ended
    with ValueError (traceback above)"): then "no problems seen" would be false."""
    errors = sum(f.severity is Severity.ERROR for f in findings)
    warns = sum(f.severity is Severity.WARN for f in findings)
    if ended:
        found = f"{errors} error(s), {warns} warning(s) found" if findings else "nothing found by gpudoctor's checks to explain it"
        return f"gpudoctor run: {what} {ended}; {found}"
    if not findings:
        return f"gpudoctor run: no problems seen in {what}"
    return f"gpudoctor run: {errors} error(s), {warns} warning(s) in {what}"


def ended_by(exc: BaseException | None, status: int | None) -> str:
    """How a script ended, in words, when it did not end cleanly; "" when it did."""
    if isinstance(exc, KeyboardInterrupt):
        return "was interrupted (KeyboardInterrupt)"
    if exc is not None:
        return f"ended with {type(exc).__name__} (traceback above)"
    if status:
        return f"exited with status {status}"
    return ""


def ranks_summary(counts: dict[str, int], nproc: int, what: str) -> str:
    """`run --nproc`: the last line, over every rank."""
    return f"gpudoctor run: {nproc} rank(s) of {what}: {counts['error']} error(s), {counts['warn']} warning(s) in all"


def ranks_line(root_cause: dict | None, ranks: list[dict]) -> str:
    """`run --nproc` of a job that failed: each rank's one state (hang/verdict.STATES) and
    the root-cause rank, the same as the JSON's `ranks` and `root_cause`."""
    states = ", ".join(f"rank {r['rank']} {r['state']}" for r in ranks)
    root = root_cause.get("rank") if root_cause else None
    cause = f"root cause: rank {root} ({root_cause['kind']})" if root_cause and root is not None else "root cause: no single rank"
    return f"ranks: {states}; {cause}\n"
