"""Python's own messages for an operation given a value of a type it does not take (issue 35, diagB20): an operator, a
comparison, an index, a call, a loop or len() refusing a value's type. Their words ("not supported", "unsupported",
"does not support") are also a program's refusal of a setup and an install's missing feature: the rules that read those words
leave these messages, which this module writes once (knowledge/patterns/classes20b.py names them, operand-type-mismatch;
feature-not-supported's rule and signs.py's environment words leave them)."""

from __future__ import annotations

import re

# CPython's words for an operation refused for its operand's type (Objects/abstract.c, Objects/object.c, ceval's
# iteration and call checks). `'NoneType' object is not subscriptable/callable/iterable` is none-value-used's
# (knowledge/patterns/classes.py), read first.
OPERAND_MESSAGE = (
    r"unsupported operand type\(s\) for (?P<operator>[^:]{1,16}): '(?P<left>[\w.]+)' and '(?P<right>[\w.]+)'"
    r"|'(?P<comparison>[<>=!]=?)' not supported between instances of '(?P<first>[\w.]+)' and '(?P<second>[\w.]+)'"
    r"|bad operand type for (?P<unary>unary [-+~]|abs\(\)): '(?P<operand>[\w.]+)'"
    # ('type' object is not subscriptable: list[int] on a Python before 3.9, a version's story, not a value's)
    r"|'(?P<used>(?!type')[\w.]+)' object (?P<use>is not (?:subscriptable|callable|iterable|an iterator)"
    r"|does not support (?:item (?:assignment|deletion)|indexing|the (?:asynchronous )?context manager protocol))"
    r"|(?:[\w.<>]+\(\) )?argument after \*\*? must be (?:a mapping|an iterable), not (?P<unpacked>[\w.]+)"
    r"|can only concatenate (?P<joined>\w+) \(not \"(?P<added>[\w.]+)\"\) to \w+"
    r"|can't multiply sequence by non-int of type '(?P<factor>[\w.]+)'"
    r"|object of type '(?P<sized>[\w.]+)' has no len\(\)"
    r"|'(?P<index>[\w.]+)' object cannot be interpreted as an integer"
)
# the same shapes without their names: for a rule that leaves these messages
OPERAND_SHAPES = re.sub(r"\(\?P<\w+>", "(?:", OPERAND_MESSAGE)
# the words that find such a message among the log's lines
OPERAND_WORDS = ("unsupported operand type", "not supported between instances of", "bad operand type for", "object is not subscriptable",
                 "object is not callable", "object is not iterable", "object is not an iterator", "object does not support item",
                 "object does not support indexing", "object does not support the", "must be a mapping, not", "must be an iterable, not",
                 "can only concatenate", "can't multiply sequence by non-int", "has no len()",
                 "object cannot be interpreted as an integer")
# the whole message, anywhere in a line (its names kept: what the class's fix names)
OPERAND = re.compile(OPERAND_MESSAGE)


def without_operand_message(text: str) -> str:
    """The text with Python's type error taken out: what is left may still speak of an install or a setup."""
    return OPERAND.sub("", text) if any(word in text for word in OPERAND_WORDS) else text
