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

from gpudoctor.knowledge.prefilter import Digest, lines_with
from gpudoctor.knowledge.story import Diagnosis

KINDS = 64  # distinct lines (their digits aside) of a trigger in a block, at most, asked whether each told nothing


def quiet_triggers(triggers: list[bytes], digests: list[Digest], chunk: bytes, long_line: int, diagnosis: Diagnosis) -> list[bytes]:
    """The triggers each of whose lines in the digests the scanner would skip unread. `digests`: the chunk's (first, when
    `chunk` is not empty) and that of the whole lines around its first newline, or the buffer's at the input's end;
    `long_line`: the scanner's longest line read whole."""
    # (the chunk's cut pieces are no lines of the block: the line its first piece ends is whole in the other digest, the
    # line its last piece starts is read with the next chunk)
    cut = {digests[0].head_cut, digests[0].tail_cut} if chunk else set()
    found = [lines_with([d], triggers, KINDS) for d in digests]
    out = []
    for trigger in triggers:
        if all(trigger in lines for lines in found) and all(
            told_nothing(line, long_line, diagnosis) or (i == 0 and line in cut) for i, lines in enumerate(found) for line in lines[trigger]
        ):
            out.append(trigger)
    return out


def told_nothing(line: bytes, long_line: int, diagnosis: Diagnosis) -> bool:
    """Whether the scanner skips the line (digits made 0) unread; its key is the line without its digits."""
    return len(line) <= long_line and line.isascii() and diagnosis.told_nothing(line.translate(None, b"0"))
