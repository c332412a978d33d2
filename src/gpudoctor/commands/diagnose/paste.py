"""A log hard-wrapped at a terminal's or a web page's width, joined back into its lines.

Copied from a terminal (tmux, screen, a web console), a long line arrives cut into pieces of
exactly the window's width: `RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled sy`
then `stem error`. No pattern matches either piece. A paste is taken as wrapped at width W when
its longest lines are W characters, at least three of them, most followed by a line that does
not start as they do (the rest of the cut line), and few lines are a little shorter than W
(a log's own longest format comes with those): then a line of exactly W characters goes on in
the next one.

A table or a banner (nvidia-smi's box, torchrun's `*****` line), whose lines all have one
width and end in a border, is not wrapped text; nor is a log whose longest lines are one record
repeated (a progress line), each followed by the next of its kind. A paste of one or two long
lines cut once cannot be told from lines that were that long: it is left as it is.
"""

from __future__ import annotations

import re
from typing import Protocol

DIGITS = str.maketrans("", "", "0123456789")
MIN_WIDTH, MAX_WIDTH = 60, 400
SAMPLE = 256 << 10  # the head of the input the width is read from (a paste is small)
# the last character of a table's or a banner's line, rich's and box-drawing borders included
BORDER = "|+-=*#\u2502\u2503\u2551\u256e\u256f\u256d\u2570\u2510\u2518\u2524"
NEAR = 8
SHORT = 60  # lines in a short paste
# two characters a cut goes between: inside a word or a name, a path, a number; or just before the
# punctuation that ends one (`symbo` `l:`, `.so` `: undefined`, `<module` `>`)
CUT = re.compile(r"^(?:[a-z0-9_][a-z0-9_]|[A-Z0-9_][A-Z0-9_]|[A-Z][a-z]|[/\\\-=:]\w|\.[a-z_]|\w[/\\.\-=(:>)\],']| [a-z0-9])$")
SPLIT = re.compile(r"^(?:[\w,'/\\\-=:(][\w ]|\w[/\\.\-=(]| \w)$")
# a line that starts a record of its own: a launcher's or logger's prefix, host:pid:tid, a module path, a keyword
RECORD_START = re.compile(
    r"[\w.\-]+:\d+:\d+ |\w[\w.\-]*: |\[|\(|[-=*#_~]{3}|\w+(?:\.\w+){2,}\b|[\w.]*(?:Error|Exception|Warning)\b|"
    r"(?:raise|return|from|import|def|class|during|step|epoch|iter|terminate|srun|slurmstepd|traceback)\b",
    re.IGNORECASE,
)
# a line that opens with its time (2024-07-24 08:45:13, 04/25/2020 09:28:19, glog's W0129 19:29:59):
# a record of its own, however the line before it ended
DATED = re.compile(r"\d{2,4}[-/]\d\d[-/]\d{2,4}[T ]\d|[IWEF]\d{4} \d\d:\d\d")
# the rest of a word cut before its colon (`undefined symbo` then `l: _ZN...`, `x86` then
# `_64-linux-gnu.so: `): one or two lowercase letters, or a name that starts with `_` or with
# digits then more, are no record's name (a bare number is: srun --label's `0: `)
WORD_TAIL = re.compile(r"(?:[a-z]{1,2}|_[\w.\-]*|\d+[a-z_.\-][\w.\-]*): ")
# a quoted line of a reply (`> Traceback ...`), not the `>` that a cut `<module>` goes on with
QUOTE = re.compile(r">(?:[ >]|$)")
# a row of a drawn box (rich's traceback, a table) opens with a side and closes with one: a row
# cut at the width leaves its first piece without the closing side and the next without the opening
BOX_OPEN, BOX_CLOSE = "\u2502\u2503\u2551\u256d\u2570\u250c\u2514", "\u2502\u2503\u2551\u256e\u256f\u2510\u2518"


class Reads(Protocol):
    def read(self, n: int, /) -> bytes: ...


def text_lines(data: bytes) -> list[str]:
    """The lines of `data` as a terminal shows them: a width is counted in characters (a box's
    `│`, a path's `ü` are one column each, and three bytes or two)."""
    return [line.rstrip("\r") for line in data.decode("utf-8", "replace").split("\n")]


def wrap_width(head: bytes) -> int:
    """The width the text was hard-wrapped at, or 0 when it was not."""
    lines = text_lines(head[:SAMPLE])
    if head[SAMPLE:]:
        lines.pop()  # cut by the sample
    lengths = [len(line) for line in lines]
    width = max(lengths, default=0)
    if not MIN_WIDTH <= width <= MAX_WIDTH:
        return 0
    full = [i for i, n in enumerate(lengths) if n == width and lines[i][-1:] not in BORDER]
    # the piece after a cut line goes on with it: it does not start as that line did (a
    # repeated log record, a progress line, does)
    going_on = [i for i in full if i + 1 < len(lines) and lengths[i + 1] and start(lines[i + 1]) != start(lines[i])]
    # lines of a log's own longest format come with lines a little shorter; cut lines do not
    near = sum(1 for n in lengths if width - NEAR <= n < width)
    # and most are cut between two characters of a word, a name or a sentence (a record that ends
    # at its width ends in a bracket, a quote, a full stop or padding)
    cut = [i for i in going_on if SPLIT.match(lines[i][-1:] + lines[i + 1][:1]) and not lines[i].endswith("  ")]
    if len(set(lines[i] for i in full)) >= 3 and len(cut) >= 2 and len(cut) * 2 >= len(full) and len(full) > 2 * near:
        return width
    return 0


def short_wrap_width(text: bytes) -> int:
    """For a short paste (all of it in `text`) whose longest lines may have been cut: the width,
    when each line of that width is cut through a word or a name that the next line goes on
    with. Lines a little shorter than the width are a log's own (a paste's lines end anywhere).
    Only a second reading: `analyse` takes it when it names a known failure on a line the
    joining made whole, which two real lines put together do not."""
    lines = text_lines(text)
    lengths = [len(line) for line in lines]
    width = max(lengths, default=0)
    if len(lines) > SHORT or not MIN_WIDTH <= width <= MAX_WIDTH or wrap_width(text):
        return 0
    full = [i for i, n in enumerate(lengths) if n == width]
    # a real line as long as the window (one that a dated line or a record follows) stays as it is
    cut = [i for i in full if i + 1 < len(lines) and not ends(lines[i], lines[i + 1])]
    return width if cut and all(cut_through(lines[i], lines[i + 1]) for i in cut) else 0


def cut_through(line: str, after: str) -> bool:
    """`line` was cut in the middle of a word or a name that `after` goes on with."""
    if box_row_cut(line, after):
        return True
    pair = line[-1:] + after[:1]
    if CUT.match(pair) is None or QUOTE.match(after) or DATED.match(after):
        return False
    if RECORD_START.match(after) is not None and not (pair[:1].isalnum() and WORD_TAIL.match(after)):
        return False
    if pair.startswith(" ") and line.endswith("  "):
        return False  # padded to the width: the line ended there
    # a dot ends a sentence unless it is inside a name or a path (torch.distributed., ./ckpt/x.)
    return not pair.startswith(".") or re.search(r"[./\\]\S*\.$", line) is not None


def box_row_cut(line: str, after: str) -> bool:
    """`line` is the first piece of a box's row cut at the width, and `after` the rest of it."""
    first, rest = line.lstrip(), after.rstrip()
    return (
        first[:1] in BOX_OPEN and bool(first[:1]) and line[-1:] not in BOX_CLOSE
        and rest[-1:] in BOX_CLOSE and bool(rest[-1:])
        # the rest of a row opens no row of its own (but may be the padding before the side)
        and (after.lstrip()[:1] not in BOX_OPEN or len(rest.strip()) == 1)
    )


def start(line: str) -> str:
    return line[:8].translate(DIGITS)


def joined(m: re.Match[bytes]) -> bytes:
    """A line of the width and the next one, joined; left apart where the line `ends` there."""
    return m.group(0) if ends(m.group(1).decode("utf-8", "replace"), m.group(2).decode("utf-8", "replace")) else m.group(1)


def ends(line: str, after: str) -> bool:
    """`line`, as long as the window, is a whole line that happened to be that long: `after` opens
    with its time, or opens a record of its own (`AssertionError: ...`, `[rank0]:`) and the two
    meet between words, not inside one."""
    return DATED.match(after) is not None or (RECORD_START.match(after) is not None and CUT.match(line[-1:] + after[:1]) is None)


class Unwrapped:
    """The input with every line of exactly `width` characters joined to the next one."""

    def __init__(self, stream: Reads, head: bytes, width: int) -> None:
        self.stream, self.pending = stream, head
        # `width` characters, a UTF-8 character's bytes taken as one (atomically: never split to
        # make up the count); a piece padded with spaces to the width (a web console's word
        # wrap) ends its line
        self.join = re.compile(rb"(?m)^((?>[\xc0-\xff][\x80-\xbf]*|[^\r\n]){%d})(?<!  )\r?\n(?=([^\r\n]{1,80}))" % width)
        self.width = width
        self.carry = b""

    def read(self, n: int) -> bytes:
        while True:  # b"" only at the end
            data, self.pending = (self.pending, b"") if self.pending else (self.stream.read(n), b"")
            text = self.carry + data
            if not data:
                self.carry = b""
                return self.join.sub(joined, text)
            # keep back the last line, and the one before it when it may go on into it
            end = text.rfind(b"\n") + 1
            before = text.rfind(b"\n", 0, max(end - 1, 0)) + 1
            if end and len(text_lines(text[before : end - 1])[0]) == self.width and text[end - 3 : end - 1] != b"  ":
                end = before
            self.carry = text[end:]
            if end:
                return self.join.sub(joined, text[:end])
