"""The triggers of a block whose every line the scanner would skip unread, found from the block's digests.

A framework may print a trigger word on every line of a long healthy log ("Process rank: 3, device: cuda:3, ..." holds
"process "): searching the block for it finds tens of thousands of lines a second, each then skipped one by one as a
repeat of a line that told nothing (`Diagnosis.repeated`). The digests (knowledge/prefilter.py) hold every line of the
block once, its digits made 0: when each line there that holds the trigger is such a repeat (`Diagnosis.told_nothing`:
ASCII, not long, its key a line that told nothing and no error it speaks of), searching for the trigger finds nothing to
read, and the scanner leaves it out. It searches for it as before when feeding the other lines may forget what was
told (`Diagnosis.may_forget`), and in a short paste (whose lines without a trigger are read too).
"""

from __future__ import annotations

import re

from gpudoctor.knowledge.prefilter import ZEROS, Digest, lines_with
from gpudoctor.knowledge.story import Diagnosis

KINDS = 64  # distinct lines (their digits aside) of a trigger in a block, at most, asked whether each told nothing
PIECE = 4096  # a cut line at a block's edge longer than this is not looked for among the block's whole lines


def quiet_triggers(triggers: list[bytes], digests: list[Digest], chunk: bytes, long_line: int, diagnosis: Diagnosis) -> list[bytes]:
    """The triggers each of whose lines in the digests the scanner would skip unread. `digests`: the chunk's (first, when
    `chunk` is not empty) and that of the whole lines around its first newline, or the buffer's at the input's end;
    `long_line`: the scanner's longest line read whole."""
    cut = edges(chunk)
    found = [lines_with([d], triggers, KINDS) for d in digests]
    out = []
    for trigger in triggers:
        if all(trigger in lines for lines in found) and all(
            told_nothing(line, long_line, diagnosis) or (i == 0 and line in cut and not whole_line(chunk, line))
            for i, lines in enumerate(found) for line in lines[trigger]
        ):
            out.append(trigger)
    return out


def told_nothing(line: bytes, long_line: int, diagnosis: Diagnosis) -> bool:
    """Whether the scanner skips the line (digits made 0) unread; its key is the line without its digits."""
    return len(line) <= long_line and line.isascii() and diagnosis.told_nothing(line.translate(None, b"0"))


def edges(chunk: bytes) -> set[bytes]:
    """The chunk's cut lines (digits made 0): the end of the line before its first newline (the rest of it is in the
    block's other digest) and the start of the line after its last (read with the next block). Its digest holds them
    as lines of their own, though they need not be lines of the block."""
    if not chunk:
        return set()
    first = chunk.find(b"\n")
    return {chunk[:first].translate(ZEROS), chunk[chunk.rfind(b"\n") + 1 :].translate(ZEROS)} if first != -1 else {chunk.translate(ZEROS)}


def whole_line(chunk: bytes, line: bytes) -> bool:
    """Whether a whole line of the chunk (between two of its newlines) is `line` with its digits made 0 (a long one is
    said to be: the caller then reads the block as before)."""
    first, last = chunk.find(b"\n"), chunk.rfind(b"\n")
    if first == last:
        return False
    if len(line) > PIECE:
        return True
    shape = re.compile(b"\n" + b"".join(rb"\d" if c == 0x30 else re.escape(bytes((c,))) for c in line) + b"\n")
    return shape.search(chunk, first, last + 1) is not None
