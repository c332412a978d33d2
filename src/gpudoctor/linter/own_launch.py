"""The launch a script is written for: whether its own launch takes a branch that a test of its options decides.

An error is certain only on the path the script runs (issue 41, item 2). Where that path goes through a test of
the script's own option (`if args.distributed:`, `if args.gpus > 1:`), the script says which way its launch goes:
the option's argparse default (`--distributed`, `default=True`), or the launch line it documents (a usage line
in its docstring or comments that runs it under torchrun, `python -m torch.distributed.launch`, `accelerate
launch` or deepspeed, and passes the flag). Taken: the failure on that branch is certain on the launch the script
is written for (an error); not taken, or not decided (a config file's value, `cfg.strategy == "ddp"`): it fails
whenever that branch is taken (a warning that names the test and the default).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpudoctor.linter.idioms import argparse_option
from gpudoctor.linter.model import constant, keyword

if TYPE_CHECKING:
    from gpudoctor.linter.model import FileModel

# A usage line that runs the script under a launcher of several processes.
LAUNCH_LINE = re.compile(r"(?:\btorchrun\b|-m\s+torch\.distributed\.(?:launch|run)\b|\baccelerate\s+launch\b"
                         r"|^\s*#?\s*deepspeed\s)[^\n]*", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Taken:
    """Whether the script's own launch takes a test (None: its text does not decide), and the words that say why."""

    taken: bool | None
    why: str


def documented_launch(file: FileModel) -> tuple[int, str] | None:
    """The first line of the file's comments or strings that runs it under a multi-process launcher (its usage
    line), with its number; None where it documents none."""
    for match in LAUNCH_LINE.finditer(file.text):
        line = file.text.count("\n", 0, match.start()) + 1
        text = match.group(0).strip()
        start = file.text.rfind("\n", 0, match.start()) + 1
        prefix = file.text[start:match.start()]
        if "#" in prefix or line in _string_lines(file):
            return line, text
    return None


def _string_lines(file: FileModel) -> set[int]:
    key = ("own-launch string lines", file.tree)
    found = file.memo.get(key)
    if isinstance(found, set):
        return found
    lines = {n for node in ast.walk(file.tree) if type(node) is ast.Constant and isinstance(node.value, str)
             and node.end_lineno for n in range(node.lineno, node.end_lineno + 1)}
    file.memo[key] = lines
    return lines


def takes(file: FileModel, test: ast.expr) -> Taken:
    """Whether the script's own launch takes `test` (see the module's docstring): `args.X`, `not args.X`, or
    `args.X <op> constant`, X one argparse option of the file."""
    negate = False
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        negate, test = True, test.operand
    if type(test) is ast.Attribute:
        attr, compare = test, None
    elif type(test) is ast.Compare and len(test.ops) == 1 and type(test.left) is ast.Attribute:
        attr, compare = test.left, test
    else:
        return Taken(None, "")
    dest = attr.attr
    option = argparse_option(file, dest)
    if option is None or any(type(c.func) is ast.Attribute and c.func.attr == "set_defaults"
                             and any(k.arg == dest for k in c.keywords) for c in file.calls):
        return Taken(None, "")
    flag = next((c for c in (constant(a, str) for a in option.args) if c and c.startswith("--")), f"--{dest}")
    launch = documented_launch(file)
    if launch is not None and re.search(rf"{re.escape(flag)}(?![\w-])|--{dest}(?![\w-])", launch[1]):
        value = _passed(launch[1], flag, option)
        holds = _holds(value, compare) if value is not _UNKNOWN else None
        if holds is not None:
            holds = holds != negate
            return Taken(holds, f"the launch line {launch[0]} documents passes `{flag}`")
    value = _default(option)
    if value is _UNKNOWN:
        return Taken(None, "")
    holds = _holds(value, compare)
    if holds is None:
        return Taken(None, "")
    return Taken(holds != negate, f"`{flag}` defaults to {value!r} (line {option.lineno})")


_UNKNOWN = object()


def _default(option: ast.Call) -> object:
    action = constant(keyword(option, "action"), str)
    default = keyword(option, "default")
    if default is None:
        return {"store_true": False, "store_false": True}.get(action or "", None)
    if type(default) is ast.Constant:
        return default.value
    if type(default) in (ast.List, ast.Tuple):
        values = [constant(e) for e in default.elts]  # type: ignore[attr-defined]
        return values if all(v is not None for v in values) else _UNKNOWN
    return _UNKNOWN


def _passed(line: str, flag: str, option: ast.Call) -> object:
    """The value the launch line gives the option: True for a store_true flag, else the word after it."""
    action = constant(keyword(option, "action"), str)
    if action == "store_true":
        return True
    if action == "store_false":
        return False
    match = re.search(rf"{re.escape(flag)}[ =]+([^\s\\]+)", line)
    if match is None:
        return _UNKNOWN
    word = match.group(1).strip("'\"")
    for cast in (int, float):
        try:
            return cast(word)
        except ValueError:
            pass
    return word


def _holds(value: object, compare: ast.Compare | None) -> bool | None:
    if compare is None:
        return bool(value)
    right = compare.comparators[0]
    if type(right) is not ast.Constant:
        return None
    other = right.value
    op = type(compare.ops[0])
    try:
        if op is ast.Eq:
            return bool(value == other)
        if op is ast.NotEq:
            return bool(value != other)
        if op is ast.Gt:
            return bool(value > other)  # type: ignore[operator]
        if op is ast.GtE:
            return bool(value >= other)  # type: ignore[operator]
        if op is ast.Lt:
            return bool(value < other)  # type: ignore[operator]
        if op is ast.LtE:
            return bool(value <= other)  # type: ignore[operator]
    except TypeError:
        return None
    return None
