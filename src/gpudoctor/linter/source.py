"""Reading a file the way Python would (PEP 263 coding cookie) and finding
its suppression comments. No exception leaves this module for a bad file:
an undecodable file is a value the engine reports."""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

# `# gpudoctor: ignore` (every rule) or `# gpudoctor: ignore[rule-a, rule-b]`.
SUPPRESSION = re.compile(r"#\s*gpudoctor:\s*ignore(?:\[([^\]]*)\])?", re.IGNORECASE)
MENTION = re.compile("gpudoctor", re.IGNORECASE)
ALL_RULES = "*"
# Lines as ast counts them (not str.splitlines, which splits on \f too).
LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Decoded:
    """A file's text, or why it has none."""

    text: str | None
    problem: str = ""  # set when text is None
    line: int = 1


def decode(data: bytes) -> Decoded:
    """Decode per PEP 263: a BOM or a coding cookie on line 1-2, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:  # unknown codec named in the cookie, or BOM/cookie conflict
        return Decoded(None, f"cannot read: {exc.msg if hasattr(exc, 'msg') else exc}", exc.lineno or 1)
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        line = data[: getattr(exc, "start", 0)].count(b"\n") + 1
        return Decoded(None, f"cannot decode as {encoding}: {exc.reason if hasattr(exc, 'reason') else exc}", line)
    if text.startswith("\ufeff"):
        text = text[1:]
    return Decoded(text)


def suppressions(text: str) -> dict[int, frozenset[str]]:
    """Line -> rule ids suppressed on it ({"*"} for a bare ignore). Only real
    comments count, not the same characters inside a string."""
    if not MENTION.search(text):  # the common case: no tokenizing at all
        return {}
    found: dict[int, frozenset[str]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type != tokenize.COMMENT:
                continue
            match = SUPPRESSION.search(tok.string)
            if not match:
                continue
            ids = match.group(1)
            rules = frozenset(i.strip() for i in ids.split(",") if i.strip()) if ids is not None else frozenset()
            found[tok.start[0]] = found.get(tok.start[0], frozenset()) | (rules or frozenset({ALL_RULES}))
    except (tokenize.TokenError, SyntaxError):
        pass  # the file parsed, so this is an edge case of the tokenizer: keep what was read
    return found
