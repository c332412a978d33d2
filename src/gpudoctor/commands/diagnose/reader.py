"""Stream a log through the knowledge base without reading it whole.

The log is read in blocks of bytes. Most lines of a training log are healthy,
so a cheap prefilter runs first (`knowledge.prefilter`: trigger words that every
known failure line contains, looked for in C over the lower-cased block). Only the
lines around a trigger are decoded and matched against the patterns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Optional, Protocol

from gpudoctor.knowledge.story import Diagnosis
from gpudoctor.commands.diagnose.quiet_triggers import quiet_triggers
from gpudoctor.launch import rundir
from gpudoctor.knowledge.prefilter import DIGEST_MIN, DIGITS, Digest, candidate_starts, digest, forget, triggers_in

BLOCK = 8 << 20
LOOKAHEAD = 64 << 10  # lines after a hit that a pattern may read as context
MAX_LINE = 1 << 20  # a "line" longer than this is read in pieces (tqdm without newlines)
LONG_LINE = 64 << 10  # what of a longer line is decoded: its head and its tail

class BinaryInput(ValueError):
    """The input is not a text log."""


class ByteSource(Protocol):
    """What a log is read from: a file, standard input, a decompressing stream (inputs.Salvaged)."""

    def read(self, n: int, /) -> bytes: ...


def max_line() -> int:
    """MAX_LINE, or GPUDOCTOR_MAX_LINE_BYTES when set (tests use a small one)."""
    import os

    value = os.environ.get(rundir.MAX_LINE_ENV, "")
    return int(value) if value.isascii() and value.isdigit() and 0 < len(value) < 12 else MAX_LINE


def decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


class EndOnce:
    """A terminal's Ctrl-D ends one read, not the stream: the next read waits for
    more typing, so a pasted log would need Ctrl-D two or three times. A buffered
    stream's read(n) returns less than n only at the end: remember that end."""

    def __init__(self, stream: ByteSource) -> None:
        import io

        self.stream = stream
        self.short_is_end = isinstance(stream, io.BufferedIOBase)
        self.ended = False

    def read(self, n: int) -> bytes:
        if self.ended:
            return b""
        data = self.stream.read(n)
        self.ended = not data or (self.short_is_end and len(data) < n)
        return data


HEAD = 4096
SHORT_PASTE = 64 << 10  # an input this small may get a second reading (a paste cut at a window's width)


def line_text(buf: bytes, start: int, stop: int) -> str:
    """A physical line; an endless one (a progress bar never ended with a newline) keeps its
    head, for the prefixes, and its tail, where the error printed after the bar is."""
    if stop - start <= LONG_LINE:
        return decode(buf[start:stop])
    return decode(buf[start : start + HEAD]) + " \u2026 " + decode(buf[stop - (LONG_LINE - HEAD) : stop])


def utf16_without_bom(head: bytes) -> str:
    """'utf-16-le' / 'utf-16-be' when the text is ASCII-range UTF-16 without a BOM (every
    other byte NUL, as a copy through some Windows tools leaves it), else ''."""
    sample = head[:8192]
    if len(sample) < 16:
        return ""
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
        return "utf-16-be"
    return ""


class Rewritten:
    """The stream (its head already read) with each block rewritten by `convert`; b"" only at the end, even where a
    block rewrites to nothing (a read that ends inside a character, a block of zeros)."""

    def __init__(self, stream: ByteSource, head: bytes) -> None:
        self.stream, self.head = stream, head

    def convert(self, raw: bytes) -> bytes:
        raise NotImplementedError

    def read(self, n: int) -> bytes:
        while True:
            raw, self.head = (self.head, b"") if self.head else (self.stream.read(n), b"")
            out = self.convert(raw)
            if out or not raw:
                return out


class Utf16ToUtf8(Rewritten):
    """PowerShell's `>` writes UTF-16 (with a BOM): read it as the UTF-8 the scanner expects."""

    def __init__(self, stream: EndOnce, head: bytes, encoding: str = "utf-16") -> None:
        import codecs

        super().__init__(stream, head)
        self.decoder = codecs.getincrementaldecoder(encoding)(errors="replace")

    def convert(self, raw: bytes) -> bytes:
        return self.decoder.decode(raw, final=not raw).encode("utf-8")


# bytes that text does not hold (tab, newline, form feed, carriage return and ESC are text's own)
CONTROL = bytes(c for c in range(1, 32) if c not in b"\t\n\x0b\x0c\r\x1b") + b"\x7f"


def looks_like_text(sample: bytes) -> bool:
    """Bytes that are a log's: UTF-8 (a cut character at the ends aside), hardly any control byte."""
    if not sample:
        return False
    controls = len(sample) - len(sample.translate(None, CONTROL))
    bad = sample.decode("utf-8", errors="replace")[1:-1].count("\ufffd")
    return controls <= 0.01 * len(sample) and bad <= 0.01 * len(sample)


# A file whose lines end in a carriage return alone (an old Mac's, a program's console written raw; lionelyl/templateRFC's
# training_log.txt, heldout27w: 11,343 CRs and one LF, the collector's header's; its text lines and its tqdm frames all end
# in CR): its lines are CR's. Where LF ends the lines, a CR inside one is a progress bar's frame, and the line stays one
# (tqdm's bar, then its LF); so does a head that is only a bar's frames (one endless line of them, its LF to come).
CR_LINES_LF_AT_MOST = 2  # LFs in the head (a header line a tool or a collector put above the log)
CR_TEXT_LINES = 3  # CR-ended lines in the head that are no progress bar's frame
PROGRESS_FRAME = re.compile(rb"\d%\||\d(?:it|s)/(?:s|it)\]|\?(?:it|s)/(?:s|it)\]|\dit \[")


def cr_ended(head: bytes) -> bool:
    """The head's lines end in CR alone: CR_LINES_LF_AT_MOST LFs or fewer, and CR_TEXT_LINES CR-ended lines or more
    that hold text other than a progress bar's frame."""
    if head.count(b"\n") > CR_LINES_LF_AT_MOST or head.count(b"\r") - head.count(b"\r\n") < CR_TEXT_LINES:
        return False
    text = 0
    for part in head.replace(b"\r\n", b"\n").split(b"\r")[:-1]:
        if part.strip() and PROGRESS_FRAME.search(part) is None:
            text += 1
            if text >= CR_TEXT_LINES:
                return True
    return False


class CrLines(Rewritten):
    """A log of CR-ended lines (`cr_ended`), read with LF for each line end."""

    def convert(self, raw: bytes) -> bytes:
        return raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")


class WithoutNul(Rewritten):
    """A log with stretches of NUL bytes in it, read without them. A job that keeps writing to a file someone emptied
    (`> nohup.out`, `truncate`, a log rotated under a running job) writes at its old offset, so the file starts with that
    many zeros; a node that crashed mid-write leaves zero-filled blocks. The text around them is the log."""

    def convert(self, raw: bytes) -> bytes:
        return raw.replace(b"\x00", b"")


# <br> written for a line break inside a physical line (diagB16: a log pasted through a page that joins its lines with
# <br>): the text after it is a line of its own. A <br> that ends a line (an HTML page's own layout) says nothing.
HTML_BREAK = re.compile(rb"<br\s*/?>(?:\r?\n)?", re.IGNORECASE)
HTML_BREAK_INLINE = re.compile(rb"<br\s*/?>(?![ \t]*(?:\r?\n|$))", re.IGNORECASE)
SAMPLE_BREAKS = 256 << 10
# A gutter of line numbers a viewer (a CI page, an editor) copied with every line ("  12 | text", "12\ttext"): taken off every
# line before anything reads them (a GPU tool's table, read whole, as much as a message) when the head's lines carry numbers
# that count up one by one, most of them (knowledge/lines.py's GUTTER takes it off a line alone).
GUTTER_LINE = re.compile(rb"(?m)^ {0,8}(\d{1,6})(?: ?(?:\||\xe2\x94\x82) |\t)")
GUTTER_SAMPLE = 200


def has_gutter(head: bytes) -> bool:
    """The head's lines (the first GUTTER_SAMPLE) are numbered by a viewer: most carry a gutter, counting up by one."""
    lines = [line for line in head[: SAMPLE_BREAKS].split(b"\n")[:GUTTER_SAMPLE] if line.strip()]
    numbers = [int(m.group(1)) for line in lines if (m := GUTTER_LINE.match(line))]
    steps = sum(1 for a, b in zip(numbers, numbers[1:]) if b == a + 1)
    return len(lines) >= 3 and len(numbers) >= 0.8 * len(lines) and steps >= 0.8 * (len(numbers) - 1)


class Normalised:
    """The input as the scanner reads it, normalised once on the way in: UTF-16 (with or without
    a BOM) and a UTF-8 BOM decoded to plain UTF-8, a hard-wrapped paste joined back into its
    lines (`paste.py`). Every reader of the log (the scanner, the nvidia-smi reader) reads this.
    Line prefixes, quoting, ANSI and HTML escapes are peeled per line (`knowledge.lines`)."""

    def __init__(self, stream: ByteSource, also: Optional[Callable[[bytes], None]] = None) -> None:
        """`also`: told every block that is read (the nvidia-smi reader)."""
        from gpudoctor.commands.diagnose.paste import Unwrapped, wrap_width

        source = EndOnce(stream)
        head = source.read(BLOCK)
        reader: EndOnce | Utf16ToUtf8 | WithoutNul | CrLines | Unwrapped = source
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            reader = Utf16ToUtf8(source, head)
            head = reader.read(BLOCK)
        elif utf16_without_bom(head):
            reader = Utf16ToUtf8(source, head, utf16_without_bom(head))
            head = reader.read(BLOCK)
        elif head[:3] == b"\xef\xbb\xbf":
            head = head[3:]
        elif b"\x00" in head[:8192] and (looks_like_text(head.replace(b"\x00", b"")[:65536]) or not head.strip(b"\x00")):
            reader = WithoutNul(source, head)
            head = reader.read(BLOCK)
            if head and not looks_like_text(head[:65536]):
                raise BinaryInput("binary file")  # (zeros, then bytes that are not a log's either; zeros alone: an empty log)
        if cr_ended(head[:SAMPLE_BREAKS]):
            reader = CrLines(reader, head)
            head = reader.read(BLOCK)
        # a page's <br> tags that stand for its line breaks (the text runs on after them on one line): lines again
        self.breaks = HTML_BREAK_INLINE.search(head[:SAMPLE_BREAKS]) is not None
        if self.breaks:
            head = HTML_BREAK.sub(b"\n", head)
        self.gutter = has_gutter(head)
        if self.gutter:
            head = GUTTER_LINE.sub(b"", head)
        self.width = wrap_width(head) if b"\x00" not in head[:8192] else 0
        if self.width:
            reader = Unwrapped(reader, head, self.width)
            head = reader.read(BLOCK)
        self.reader, self.head, self.also = reader, head, also
        self.first, self.total = head, 0
        self.whole: bytes | None = None  # all of a short input, once it was read to its end
        self.short_width = 0  # the width of the second reading, once asked for

    def read(self, n: int, /) -> bytes:
        """b"" only at the end."""
        if self.head:
            data, self.head = self.head, b""
        else:
            data = self.reader.read(n)
            if self.breaks and data:
                data = HTML_BREAK.sub(b"\n", data)
            if self.gutter and data:
                data = GUTTER_LINE.sub(b"", data)
        self.total += len(data)
        if data and self.also is not None:
            self.also(data)
        if not data and self.total == len(self.first) and not self.width and len(self.first) <= SHORT_PASTE:
            self.whole = self.first
        return data

    def second_reading(self) -> bytes | None:
        """A short paste whose longest line or two look cut at the window's width, joined back
        (`paste.short_wrap_width`), or None: a reading to try when the paste as it is explains nothing."""
        from gpudoctor.commands.diagnose.paste import Unwrapped, short_wrap_width

        width = self.short_width = short_wrap_width(self.whole) if self.whole else 0
        if not width:
            return None
        import io

        joined = Unwrapped(io.BytesIO(b""), self.whole or b"", width)
        out = b""
        while True:
            part = joined.read(BLOCK)
            if not part:
                return out
            out += part


def failure_lines_without_trigger(buf: bytes, end: int, candidates: set[int], diagnosis: Diagnosis) -> list[int]:
    """Start offsets of the lines of a short paste, all of it in buf[:end], that the trigger words missed but
    that are a failure's own line (`Diagnosis.is_failure_line`: a message pasted without its exception's class,
    a Lua error, a glog error record). Only a paste is read line by line for them: a program's log holds the
    class, the level word or the traceback that the triggers find."""
    out, pos = [], 0
    while pos < end:
        nl = buf.find(b"\n", pos, end)
        stop = end if nl == -1 else nl
        if pos not in candidates and stop - pos <= LONG_LINE and diagnosis.is_failure_line(decode(buf[pos:stop])):
            out.append(pos)
        pos = stop + 1
    return out


def scan(stream: ByteSource | Normalised, diagnosis: Diagnosis, source: str = "") -> int:
    """Feed every candidate line of `stream` to `diagnosis`; returns the number of lines."""
    carry = b""
    base_line = 0  # lines before the current buffer
    first = True
    reader = stream if isinstance(stream, Normalised) else Normalised(stream)
    diagnosis.unwrapped_at = diagnosis.unwrapped_at or reader.width
    head = reader.read(BLOCK)
    pending = [head]
    while True:
        chunk = pending.pop() if pending else reader.read(BLOCK)
        eof = not chunk
        buf = carry + chunk
        if first and chunk:
            if b"\x00" in chunk[:8192]:
                raise BinaryInput("binary file")
            first = False
        if not buf:
            break
        # process up to a line end that leaves LOOKAHEAD bytes for context
        if eof:
            end = len(buf)
        else:
            limit = len(buf) - LOOKAHEAD
            end = buf.rfind(b"\n", 0, limit) + 1 if limit > 0 else 0
            if end == 0:
                if len(buf) < max_line() + LOOKAHEAD:
                    carry = buf
                    continue
                # One enormous line (tqdm's bars, each ended by \r only): read it in pieces,
                # all but the lookahead at a time, so that no more than a block of it is held.
                end = max(buf.rfind(b"\r", 0, limit) + 1, limit // 2)
        # the triggers the block may hold, from the digest its readers made of the chunk (and a small one of what
        # this buffer holds besides: the carried lines and the line that runs across into the chunk)
        # (a long line carried from the blocks before: no digest of it beside the block's own, as before)
        joined = len(carry) + (chunk.find(b"\n") + 1 or len(chunk)) if chunk else len(buf)
        digests = ([digest(chunk), Digest(buf[:joined])] if chunk else [Digest(buf)]) if joined < DIGEST_MIN else []
        triggers = triggers_in(digests) if digests else None
        counted = 0
        line_no = base_line
        paste = eof and base_line == 0 and end <= SHORT_PASTE
        quiet = quiet_triggers(triggers, digests, chunk, LONG_LINE, diagnosis) if triggers and not paste else []
        searched = [t for t in triggers if t not in quiet] if triggers and quiet else triggers
        starts = candidate_starts(buf[:end].lower(), end, searched) if searched is None or searched else []
        if quiet and diagnosis.may_forget(len(starts)):  # (then a quiet line may be read again: every trigger searched, as before)
            starts = candidate_starts(buf[:end].lower(), end, triggers)
        if paste:
            starts = sorted({*starts, *failure_lines_without_trigger(buf, end, set(starts), diagnosis)})
        for start in starts:
            stop = buf.find(b"\n", start, end)
            stop = end if stop == -1 else stop
            if stop - start <= LONG_LINE and (line := buf[start:stop]).isascii() and diagnosis.repeated(line.translate(None, DIGITS)):
                continue  # a repeat that told nothing (feed_line's own first question, asked before decoding: ASCII decodes to itself)
            line_no += buf.count(b"\n", counted, start)
            counted = start
            raw = line_text(buf, start, stop)

            def following(n: int, after: int = stop) -> list[str]:
                out, pos = [], after + 1
                for _ in range(n):
                    if pos >= len(buf):
                        break
                    nl = buf.find(b"\n", pos)
                    nl = len(buf) if nl == -1 else nl
                    out.append(line_text(buf, pos, nl))
                    pos = nl + 1
                return out

            def preceding(n: int, before: int = start) -> list[str]:
                out: list[str] = []  # the lines of this block before the line, nearest last
                pos = before
                while len(out) < n and pos > 0:
                    nl = buf.rfind(b"\n", 0, pos - 1)
                    out.append(line_text(buf, nl + 1, pos - 1))
                    pos = nl + 1
                return out[::-1]

            diagnosis.feed_line(raw, line_no + 1, source, following, preceding)
        total_here = buf.count(b"\n", 0, end)
        if end == len(buf) and buf and not buf.endswith(b"\n"):
            total_here += 1  # a last line without a newline
        base_line += total_here
        carry = buf[end:]
        if eof and not carry:
            break
    forget()
    diagnosis.lines += base_line
    return base_line
