"""Whether the input ends in a package build's or a pip install's own progress lines: a build of GPU code pasted cut before
its error (log-inconclusive case `build-cut`, commands/diagnose/analyse.py `no_failure`).

Users paste the part of a failed build they see: setuptools copying the package's files into build/, the compiler commands
ninja or setuptools run, pip collecting packages. The build's own error line (the first `error:` of the compiler, nvcc's
"Unsupported gpu architecture", "Killed signal terminated program cc1plus") comes after, and pip prints it only with -v:
where the paste stops in these lines, no cause is shown, and none is guessed (diagE31, issue 35: the cut build logs of the
retired parts). Only the input's last lines are read, from the end the `Tail` reader keeps: no search of the whole input.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

# a build's progress: setuptools' steps and copies into build/, a compile or link command with its flags, ninja's and make's
# (CMake's) numbered steps
BUILD_LINE = re.compile(
    r"\bcopying \S.* -> \S*build\b"
    r"|^creating \S*build\b"
    r"|^running (?:build|build_py|build_ext|bdist_wheel|bdist_egg|egg_info|develop|install|install_lib|install_scripts|install_egg_info)\s*$"
    r"|^building '[\w.]+' extension"
    r"|^(?:reading|writing) manifest (?:file|template)"
    r"|^adding license file"
    r"|^installing library code to"
    r"|^Emitting ninja build file"
    r"|^\[\d+/\d+\] (?:\S*[/\\])?(?:ccache )?(?:gcc|g\+\+|c\+\+|cc|clang\+\+?|nvcc|cl|ld|ar)(?:\.exe)?\b"
    r"|^\[\d+/\d+\] (?:Building (?:CUDA|CXX|C) object|Linking (?:CUDA|CXX|C) )"
    r"|^\[\s*\d+%\] (?:Building (?:CUDA|CXX|C) object|Linking (?:CUDA|CXX|C) )"
    r"|^\"?(?:\S*[/\\])?(?:gcc|g\+\+|c\+\+|cc|clang\+\+?|x86_64-linux-gnu-g(?:cc|\+\+)|nvcc|cl)(?:\.exe)?\"? .*\s[-/][cIDLWfo]"
)
# pip's own progress before or around a build: packages collected, downloaded, found installed, wheels being built
PIP_LINE = re.compile(
    r"^(?:Collecting \S|Using cached \S|Downloading \S|Requirement already satisfied: |Obtaining \S|Preparing metadata|"
    r"Getting requirements to build|Installing build dependencies|Building wheels? for|Running setup\.py (?:install|develop) for|"
    r"Installing collected packages: |Looking in indexes: |Processing \S)"
)
# a pasted line's wrapping: a Python list's quotes (a notebook's output), a quote's '>', a fence
LEAD = " \t'\"[>,"
NOT_LINES = ("```", "[end of output]")
LAST = 3  # the lines at the end read: at least two of them the build's or pip's


class BuildCut(NamedTuple):
    """`what`: "build" (a package build's progress) or "install" (pip's); `line`, `text`: its last progress line."""

    what: str
    line: int
    text: str


def build_cut(tail: bytes, newlines: int) -> Optional[BuildCut]:
    """The build or install whose progress lines end the input (`tail`: its last bytes; `newlines`: in the whole input), or
    None where its last lines are something else (the run after an install, a person's sentences, a failure's line)."""
    lines = tail.decode("utf-8", "replace").split("\n")
    last: list[tuple[int, str]] = []
    whole = tail.count(b"\n") == newlines  # (else the tail's first line may be a part of one)
    for k in range(len(lines) - 1, -1 if whole else 0, -1):
        text = lines[k].strip(LEAD).rstrip()
        if text and text not in NOT_LINES:
            last.append((newlines - (len(lines) - 1 - k) + 1, text))
            if len(last) == LAST:
                break
    if not last:
        return None
    builds = [(n, t) for n, t in last if BUILD_LINE.search(t)]
    pips = [(n, t) for n, t in last if PIP_LINE.search(t)]
    shown = builds or pips
    if len(builds) + len(pips) < min(2, len(last)) or not shown:
        return None
    n, text = shown[0]  # (the latest first)
    return BuildCut("build" if builds else "install", n, " ".join(text.split())[:160])
