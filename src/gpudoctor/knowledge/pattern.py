"""A failure pattern is one small unit, like a lint rule: what it matches, what
it means, the fix, and the real log lines that prove it.

Every pattern is a table row in one of the family modules under
`gpudoctor.knowledge.patterns`. The registry (`gpudoctor.knowledge.patterns.ALL`)
keeps them in precedence order: when several patterns could claim one line,
the first one in the registry wins, so specific patterns come before generic ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from gpudoctor.core.findings import Severity

# What a matched line is in the story of a failure:
CAUSE = "cause"  # the failure itself (a too-small /dev/shm, a CUDA error, a bad flag)
CONSEQUENCE = "consequence"  # what other ranks / the launcher print because something failed
HARMLESS = "harmless"  # noise users worry about; safe to ignore (or only advice)
ROLES = (CAUSE, CONSEQUENCE, HARMLESS)

FAMILIES = ("nccl", "timeout", "cuda", "ddp", "launcher", "dataloader", "gloo", "platform", "numerics")


@dataclass(frozen=True)
class Example:
    """A real log line and the public thread it was copied from."""

    line: str
    source: str


@dataclass(frozen=True)
class Pattern:
    id: str
    family: str
    role: str
    severity: Severity
    title: str
    regex: re.Pattern
    # Cheap literal substrings, at least one of which every matching line
    # contains: the regex only runs on lines that contain one of them.
    needles: tuple[str, ...]
    why: str
    fix: str
    examples: tuple[Example, ...]
    # Lines that look alike but must not match (the harmless twin, a healthy line).
    not_examples: tuple[str, ...] = ()
    # Pattern ids that, when also seen in the log, explain this one: it is then
    # reported as their consequence.
    after: tuple[str, ...] = ()
    # Lines after the match that belong to the message (torchrun's Root Cause block).
    context_after: int = 0
    # Turns the regex match (and the context lines) into evidence fields; None where the match holds only with an answer
    # on the lines after it (a REPL's call, its answer on the next line) and they do not give it: the line is not read.
    fields: Optional[Callable[[re.Match, list[str]], Optional[dict]]] = field(default=None, compare=False)
    # Evidence from the lines before the match (at most `context_before` of them, the nearest last): what the
    # program wrote before a launcher was stopped from outside, for instance (the line number of the match is given).
    context_before: int = 0
    fields_before: Optional[Callable[[int, list[str]], dict]] = field(default=None, compare=False)
    # A pattern that never claims a line itself: the diagnosis turns a line the pattern named
    # here claimed into this one when the traceback around it says so (its examples are that pattern's lines).
    refines: str = ""

    def match(self, text: str) -> Optional[re.Match]:
        if self.refines:
            return None
        for needle in self.needles:
            if needle in text:
                return self.regex.search(text)
        return None


# A line that is no thread's heading ("# ..."): a title or a heading that quotes a message is the reporter's words, and a
# wording added to a class names its cause only from a line of the run (the brief of issue 35: a failure only in the title
# stays undecided). An alternative that starts with it matches from the line's start.
NOT_HEADING = r"^(?!#\s).*?"


def pattern(
    id: str,
    family: str,
    role: str,
    severity: Severity,
    title: str,
    regex: str,
    needles: tuple[str, ...] | list[str],
    why: str,
    fix: str,
    examples: list[tuple[str, str]],
    not_examples: tuple[str, ...] | list[str] = (),
    after: tuple[str, ...] | list[str] = (),
    context_after: int = 0,
    fields=None,
    flags: int = 0,
    refines: str = "",
    context_before: int = 0,
    fields_before=None,
) -> Pattern:
    """A table row, written compactly: examples as (line, source thread) pairs."""
    return Pattern(
        id=id,
        family=family,
        role=role,
        severity=severity,
        title=title,
        regex=re.compile(regex, flags),
        needles=tuple(needles),
        why=" ".join(why.split()),
        fix=fix,
        examples=tuple(Example(line, source) for line, source in examples),
        not_examples=tuple(not_examples),
        after=tuple(after),
        context_after=context_after,
        fields=fields,
        refines=refines,
        context_before=context_before,
        fields_before=fields_before,
    )


def head_of(message: str, shortest: int) -> str:
    """A regex for a message a paste cut short: its first `shortest` characters or more, then the line's end (a quote or
    backtick the paste closed it with allowed). A longer message that starts the same way is not a cut, and does not match."""
    rest = "".join(f"(?:{re.escape(ch)}" for ch in message[shortest:]) + ")?" * len(message[shortest:])
    return re.escape(message[:shortest]) + rest + r"""[\s`'"]*$"""


def groups(m: re.Match, _context: list[str]) -> dict:
    """The default evidence: the regex's named groups that matched."""
    return {k: v for k, v in m.groupdict().items() if v is not None}


def needle_gate(patterns) -> re.Pattern:
    """One regex that finds any needle of these patterns: a text it does not match can match
    none of them."""
    return any_of(n for p in patterns for n in p.needles)


def any_of(words) -> re.Pattern:
    """A regex that finds any of these literal strings, written as a trie (words sharing a
    prefix share its branch), so a text costs one pass in C instead of one search per word."""
    trie: dict = {}
    for word in words:
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        branches = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return re.compile(emit(trie) or r"(?!)")
