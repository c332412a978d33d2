"""The message a line carries when a program prints it in a shape other than Python's `Class: message`.

A configuration check's refusal reaches a log in the shape of the library that made it: pydantic's validation
error (v2: `  Value error, MESSAGE [type=value_error, input_value=..., input_type=...]` under `N validation error(s)
for Model`; v1: `  MESSAGE (type=value_error)` under the field's name), a C or C++ assert of a condition
(`Assertion failed: COND (file:line)`, MSVC's `Assertion failed: COND, file F, line N`), ggml's `GGML_ASSERT:
file:line: COND` (and `file:line: GGML_ASSERT(COND) failed`). Each is read as the exception its words are, so
the rules for classes of messages (knowledge/patterns/) decide it as they decide `ValueError: MESSAGE` and
`AssertionError: COND`. Counted on the development parts before writing: pydantic v2 in 1 log (vLLM's config
via NeMo-Skills), v1 in 2 logs of 2 projects (gluonts' TrainerModel), the C++ assert in 2 logs of 2 projects
(TensorRT-LLM's WorldConfig) and 1 of NVIDIA's kernel module (NVRM's, its own pattern), GGML_ASSERT in 1 (LocalAI).

Read by knowledge/story.py (a line no pattern claims as written), knowledge/unrecognised.py (the class of an
exception's message, a native assert's condition) and, for pydantic's header, `validation_error`: its first error is
the failure's message.
"""

from __future__ import annotations

import re
from typing import Optional

# (shape, the exception class its message is read as); the message is the group `message`
SHAPES: tuple[tuple[re.Pattern, str], ...] = (
    # pydantic v2: "Value error, ..." / "Assertion failed, ..." then the error's type and input in brackets
    (re.compile(r"^\s*Value error, (?P<message>.+?)(?: \[type=value_error\b.*)?$"), "ValueError"),
    (re.compile(r"^\s*Assertion failed, (?P<message>.+?)(?: \[type=assertion_error\b.*)?$"), "AssertionError"),
    # pydantic v1: the message, then its type in parentheses
    (re.compile(r"^\s*(?P<message>\S.*?) \(type=value_error\)$"), "ValueError"),
    (re.compile(r"^\s*(?P<message>\S.*?) \(type=assertion_error\)$"), "AssertionError"),
    # C's assert() (glibc prints "prog: file:line: func: Assertion `COND' failed.", the CUDA patterns' shape), C++
    # libraries' own assert macros (TensorRT-LLM's TLLM_CHECK), MSVC's
    (re.compile(r"\bAssertion failed: (?P<message>.+?)(?: \((?:[^()]*[/\\])?[\w.\-]+:\d+\)|, file \S+, line \d+)?\s*$"), "AssertionError"),
    # ggml (llama.cpp and its bindings)
    (re.compile(r"\bGGML_ASSERT: \S+?:\d+: (?P<message>.+?)\s*$"), "AssertionError"),
    (re.compile(r"\bGGML_ASSERT\((?P<message>.+)\) failed"), "AssertionError"),
)
# The words every shape holds: a line without any is not read again
WORDS = ("Value error, ", "Assertion failed", "(type=value_error)", "(type=assertion_error)", "GGML_ASSERT")


def carried(text: str) -> Optional[str]:
    """`Class: message` for a line in one of the shapes, or None."""
    if not any(word in text for word in WORDS):
        return None
    for shape, exception in SHAPES:
        m = shape.search(text)
        if m is not None and m.group("message").strip():
            return f"{exception}: {m.group('message').strip()}"
    return None


# pydantic's header ("N validation error(s) for Model"), and an error under it: v2's "  MESSAGE [type=T, input_value=...]"
# (its "Value error, " before a validator's own message), v1's "  MESSAGE (type=T)"; a field's name alone on the line before
VALIDATION_HEADER = re.compile(r"^\s*(?P<count>\d+) validation errors? for (?P<model>[\w.]+)\s*$")
VALIDATION_ERROR = re.compile(r"^\s*(?:(?:Value|Assertion) error, )?(?P<message>\S.*?) (?:\[type=[\w.]+\b.*|\(type=[\w.]+(?:;[^)]*)?\))$")
FIELD = re.compile(r"^\s*(?P<field>[\w.\[\]-]+(?: -> [\w.\[\]-]+)*)\s*$")


def validation_error(header: str, after: list[str]) -> Optional[str]:
    """`MESSAGE (N validation error(s) for Model, field F)` for a pydantic header whose first error is on the lines after
    it, or None: the header alone names no failure, its errors do."""
    head = VALIDATION_HEADER.match(header)
    if head is None:
        return None
    field = ""
    for line in after[:3]:
        error = VALIDATION_ERROR.match(line.rstrip())
        if error is not None:
            return f"{error.group('message')} ({header.strip()}" + (f", field {field}" if field else "") + ")"
        named = FIELD.match(line)
        if named is None:
            return None
        field = named.group("field")
    return None


VALIDATED = re.compile(r"^(?P<message>.+) \(\d+ validation errors? for [\w.]+(?:, field [^)]*)?\)$")


def validated(message: str) -> Optional[str]:
    """The error of a message `validation_error` wrote, read as the ValueError its validator raised, or None."""
    m = VALIDATED.match(message)
    return f"ValueError: {m.group('message')}" if m is not None else None
