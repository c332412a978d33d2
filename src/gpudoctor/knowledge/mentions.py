"""Lines that speak of an error in words no rule of gpudoctor reads.

A log with no failure gpudoctor can name and no end is undecided. "No line shows a failure"
is only true of it when no line even speaks of one: an error quoted in prose ("then I get
Error using gpuArray ..."), another runtime's message (MATLAB, a C++ framework's own
format, a driver's event) or a program's own words ("Training failed: ...") are failure
lines a reader sees at once. gpudoctor cannot tell whether one of them ended the run, so
it still does not decide; but it says which lines they are, instead of saying there are
none (`log-inconclusive`, case `mentions`).

What is left out is what speaks of errors without reporting one: a count that is zero
("0 errors", "failed: 0"), a metric (a training's "error 0.031", "error rate"), a line of
code (`except Exception:`, `raise ValueError(...)`) and warnings, which a run survives far
more often than not (the patterns read the warnings that matter).
"""

from __future__ import annotations

import re

# The words the prefilter already lets through (knowledge/prefilter.py): a line without one
# never reaches the reader.
SPEAKS = re.compile(
    r"\b(?:errors?|fail(?:ed|s|ure|ures)?|fatal|exceptions?|abort(?:ed|ing)?|killed|segmentation fault"
    r"|timed out|refused|invalid)\b",
    re.IGNORECASE,
)
NOT_A_REPORT = re.compile(
    r"warn"  # Warning:, WARN, UserWarning, FutureWarning: what a run survives
    r"|\b(?:0|no|zero|without)\s+(?:errors?|failures?|exceptions?)\b"
    r"|\b(?:errors?|failures?|failed|exceptions?)\s*[:=]\s*0\b(?![.\d])"
    r"|\berror\s*(?:rate|bar|metric|signal)\b"
    r"|\b(?:errors?|err)\s*[:=]?\s*[-+]?\d*\.\d+"  # a metric: "val error: 0.031"
    r"|^\s*(?:except\b|raise\b|def\b|class\b|try:|if\b|elif\b|return\b|import\b|from\s+\S+\s+import\b|assert\b|#|//)"
    r"|\bif\s+\w*(?:error|fail)",
    re.IGNORECASE,
)
KEPT = 3  # lines shown; the count says how many there were
# A person's sentence about the error ("When I train with 4 GPUs, an error occurs:") is true but
# not the error itself: the program's own lines are shown before it.
PROSE = re.compile(
    r"^\W*(?:i|i'm|i've|my|we|when|hello|hi|how|why|it|this|the following|but|then|trying|appears|seems|after|so)\b",
    re.IGNORECASE,
)


def speaks_of_error(text: str) -> bool:
    """Whether the line reports an error or a failure in words, by what it says (see the module's why)."""
    return bool(SPEAKS.search(text)) and not NOT_A_REPORT.search(text)


def lead_first(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The program's own lines before a person's sentences about them, each group in log order."""
    return sorted(lines, key=lambda seen: bool(PROSE.search(seen[1])))
