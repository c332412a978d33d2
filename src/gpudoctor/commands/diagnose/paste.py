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

DIGITS = b"0123456789"
MIN_WIDTH, MAX_WIDTH = 60, 400
SAMPLE = 256 << 10  # the head of the input the width is read from (a paste is small)
BORDER = b"|+-=*#"  # the last character of a table's or a banner's line
NEAR = 8
SHORT = 60  # lines in a short paste
# two characters a cut goes between: inside a word or a name, a path, a number
CUT = re.compile(rb"^(?:[a-z0-9_][a-z0-9_]|[A-Z0-9_][A-Z0-9_]|[A-Z][a-z]|[/\\\-=:]\w|\.[a-z_]|\w[/\\.\-=(]| [a-z0-9])$")
SPLIT = re.compile(rb"^(?:[\w,'/\\\-=:(][\w ]|\w[/\\.\-=(]| \w)$")
# a line that starts a record of its own: a launcher's or logger's prefix, host:pid:tid, a module path, a keyword
RECORD_START = re.compile(
    rb"[\w.\-]+:\d+:\d+ |\w[\w.\-]*: |\[|\(|[-=*#_~]{3}|\w+(?:\.\w+){2,}\b|[\w.]*(?:Error|Exception|Warning)\b|"
    rb"(?:raise|return|from|import|def|class|during|step|epoch|iter|terminate|srun|slurmstepd|traceback)\b",
    re.IGNORECASE,
)


class Reads(Protocol):
    def read(self, n: int, /) -> bytes: ...


def wrap_width(head: bytes) -> int:
    """The width the text was hard-wrapped at, or 0 when it was not."""
    lines = [line.rstrip(b"\r") for line in head[:SAMPLE].split(b"\n")]
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
    cut = [i for i in going_on if SPLIT.match(lines[i][-1:] + lines[i + 1][:1]) and not lines[i].endswith(b"  ")]
    if len(set(lines[i] for i in full)) >= 3 and len(cut) >= 2 and len(cut) * 2 >= len(full) and len(full) > 2 * near:
        return width
    return 0


def short_wrap_width(text: bytes) -> int:
    """For a short paste (all of it in `text`) whose longest line or two may have been cut once:
    the width, when each such line is cut through a word or a name that the next line goes on
    with. Only a second reading: `analyse` takes it when it explains what the paste as it is
    does not."""
    lines = [line.rstrip(b"\r") for line in text.split(b"\n")]
    lengths = [len(line) for line in lines]
    width = max(lengths, default=0)
    if len(lines) > SHORT or not MIN_WIDTH <= width <= MAX_WIDTH or wrap_width(text):
        return 0
    full = [i for i, n in enumerate(lengths) if n == width]
    if any(width - NEAR <= n < width for n in lengths):
        return 0
    return width if all(i + 1 < len(lines) and cut_through(lines[i], lines[i + 1]) for i in full) else 0


def cut_through(line: bytes, after: bytes) -> bool:
    """`line` was cut in the middle of a word or a name that `after` goes on with."""
    pair = line[-1:] + after[:1]
    if CUT.match(pair) is None or RECORD_START.match(after) is not None:
        return False
    if pair.startswith(b" ") and line.endswith(b"  "):
        return False  # padded to the width: the line ended there
    # a dot ends a sentence unless it is inside a name or a path (torch.distributed., ./ckpt/x.)
    return not pair.startswith(b".") or re.search(rb"[./\\]\S*\.$", line) is not None


def start(line: bytes) -> bytes:
    return line[:8].translate(None, DIGITS)


class Unwrapped:
    """The input with every line of exactly `width` characters joined to the next one."""

    def __init__(self, stream: Reads, head: bytes, width: int) -> None:
        self.stream, self.pending = stream, head
        # a piece padded with spaces to the width (a web console's word wrap) ends its line
        self.join = re.compile(rb"(?m)^([^\n]{%d}(?:[^ \n][^\n]|[^\n][^ \n]))\r?\n(?=[^\r\n])" % (width - 2))
        self.width = width
        self.carry = b""

    def read(self, n: int) -> bytes:
        while True:  # b"" only at the end
            data, self.pending = (self.pending, b"") if self.pending else (self.stream.read(n), b"")
            text = self.carry + data
            if not data:
                self.carry = b""
                return self.join.sub(rb"\1", text)
            # keep back the last line, and the one before it when it may go on into it
            end = text.rfind(b"\n") + 1
            before = text.rfind(b"\n", 0, max(end - 1, 0)) + 1
            if end and len(text[before : end - 1].rstrip(b"\r")) == self.width and text[end - 3 : end - 1] != b"  ":
                end = before
            self.carry = text[end:]
            if end:
                return self.join.sub(rb"\1", text[:end])
