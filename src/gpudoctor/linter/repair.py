"""Reading a pasted snippet that is not valid Python, so that lint's rules can
look at the rest of it.

A help-thread paste is often cut off mid-statement, wrapped in markdown
fences, copied from a REPL or an editor with line numbers, or taken from the
middle of a function. When `ast.parse` refuses such a text, `repair` undoes
those shapes and then, one bounded step at a time, cuts or blanks what still
does not parse:

- markdown: the fence lines and the prose outside ```python blocks are blanked;
- a REPL or IPython transcript: the prompts (`>>> `, `... `, `In [3]: `) become
  spaces and the printed output lines are blanked;
- lines that all begin with their own number (`12 | x = 1`): the numbers go;
- notebook magics and shell lines (`%timeit ...`, `!pip install ...`) are blanked;
- a traceback pasted with the code, from `Traceback (most recent call last):` to
  the exception's line, is blanked;
- a snippet whose first line of code is indented (the body of something not
  pasted) is read as the body of a function, its lines and columns unchanged;
- a call or literal still open at the end of the text after a whole
  argument (its last line ends in a comma, a bracket or a string) gets its
  brackets closed on that line, when the statement then parses;
- any other statement still open at the end of the text (an unclosed bracket or
  string, a `\\` continuation) is closed after its last whole part where only
  brackets that are no call's arguments are open (`[all_gather(x) for x in` reads
  `[all_gather(x)]`), and otherwise cut, from its first line to the end;
- a bracket left open mid-text, before a line that starts a new statement at
  the open statement's indentation (a paste that lost a `])`), is closed at the
  end of the last line before it, when the statement then parses;
- a string cut off at the end of the text (`cmd = "python -m ... run.py --ro`) is
  closed there, with the brackets around it, when that parses;
- the ellipsis character (`Accelerator(…)`) is read as `...`, and a `def` whose
  parentheses a page dropped (`def train:`) is read with them;
- a compound statement whose body was cut off (`if __name__ == "__main__":`
  as the last line, or every block of a page that lost its indentation) gets
  `pass` after its `:`, on the same line;
- a statement one or two spaces deeper than the statement above it, which opens
  no block (a paste's stray spaces), is moved left to stand with it, with the
  lines indented under it (its columns shifted back in every diagnostic);
- a placeholder for code the paste left out (`{your net}`, `[YOUR MODEL]`,
  `<path to data>`) is read as a name of its own width, when the statement then
  parses;
- any other statement Python refuses (`…`, a line deeper than that) is blanked,
  with the block it opens.

Line numbers never move: a line is blanked or completed in place, never
deleted or inserted, so every diagnostic points at the user's own line.
Bounded: at most MAX_ATTEMPTS steps (each may try CLOSE_TRIES closings), texts of at most MAX_LINES lines, and
the steps may blank at most a third of the code lines (MAX_CUT_SHARE); past a
bound there is no repair and the file stays a `syntax-error` only. Never raises.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import textwrap
import tokenize
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from gpudoctor.linter.source import LINE_BREAK

MAX_ATTEMPTS = 20  # parses, the first one included
MAX_LINES = 3000  # a longer file is not a paste: it is not repaired
MAX_CUT_SHARE = 1 / 3  # of the code lines: at most this many may be blanked by the steps that cut code
MIN_CUT = 3  # ... but a short snippet may always lose this many
MAX_STRAY_INDENT = 2  # spaces a pasted statement may stand deeper than the one above and be re-aligned
CLOSE_TRIES = 12  # cut points tried, from the end back, to close an unfinished last statement
# The function an indented snippet is read inside: a line above line 1, never shown.
SNIPPET_FUNCTION = "_gpudoctor_snippet_"
HEADER = f"def {SNIPPET_FUNCTION}():\n"

FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
PYTHON_FENCES = {"", "py", "python", "python3", "py3", "pycon", "ipython", "ipython3"}
PROMPT = re.compile(r"^(>>>|\.\.\.)(?: |$)|^In \[\d*\]: ?|^\s+\.\.\.: ?")
NUMBERED = re.compile(r"^\s*(\d+)(?: ?[|:.)] ?| |$)")
MAGIC = re.compile(r"^\s*(?:%%?[A-Za-z]|![^=])")
TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):\s*$")
ELLIPSIS = re.compile(r"^\s*(?:\.\s?){3,}\s*$|^\s*…+\s*$")
HEADER_LINE = re.compile(r"\bon line (\d+)\b")
# A function's header, and the lines at its depth that end a body pasted without its indentation.
DEF_LINE = re.compile(r"^\s*(?:async\s+)?def\s")
ENDS_BODY = re.compile(r"^\s*(?:(?:async\s+)?def\s|class\s|@|if __name__)")
ORPHAN = re.compile(r"^\s*(elif|else)\b")  # a branch's keyword at the start of a line
RUN_TOGETHER = re.compile(r"[)\]}\w'\"]( {2,})(?=[A-Za-z_])")  # a statement's end, 2+ spaces, a name
# A paste's placeholder for code left out: `{your net}`, `[YOUR MODEL]`, `<path to data>` (words, a space).
PLACEHOLDER = re.compile(r"\{[A-Za-z][\w.-]*(?: [\w.-]+)+\}|\[[A-Za-z][\w.-]*(?: [\w.-]+)+\]|<[A-Za-z][\w.-]*(?: [\w.-]+)*>")
# A line that may end a cut-off call or literal: after a comma, a bracket or a string, not
# after a name or a number, which the cut may have shortened (`set_device(loc`).
CLOSABLE = re.compile(r"[,(\[{)\]}'\"]$")
# `def train:` (a page that dropped the parentheses of every call, a def's too).
DEF_NO_PARENS = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)\s*:")
# A line that starts a statement of its own: an assignment to a name, a loop, an import.
NEW_STATEMENT = re.compile(r"^\s*(?:[A-Za-z_][\w.]*\s*(?:,\s*[A-Za-z_]\w*\s*)*=[^=]"
                           r"|(?:for|while|if|with|def|class|import|from)\b)")
DETECTED = re.compile(r"\(detected at line (\d+)\)")
# How a string cut off at the end of a paste may be closed: its quote, then the brackets around it.
STRING_ENDS = ('"', "'", '"""', "'''")
STRING_CLOSERS = ("", ")", "]", "}", "))", "])", ")]", ")))", "]))")
# The names a fix writes: `x.set_epoch(`, `map_location=`, `__name__`.
FIX_NAME = re.compile(r"\.(\w+)|(\w+)\s*\(|\b(\w+)=(?!=)|(__\w+__)")


@dataclass(frozen=True)
class Repair:
    """A tree for a text Python refused, and what was done to get it."""

    text: str  # the lines read: as many as the file's, repaired ones blanked or completed
    tree: ast.Module  # positions in the file's own lines (and columns, after `shift`)
    changed: tuple[int, ...]  # lines repair blanked, stripped or completed (1-based, sorted)
    indented: bool  # read as the body of a function (the text's first line of code is indented)
    inserted: frozenset[int]  # lines repair wrote code on (`pass`): no rule may fire there
    shift: dict[int, int]  # characters cut from a line's start (its line number): add to a column
    steps: tuple[str, ...]  # what was done, in words, in order
    removed: str = ""  # the text of the lines blanked, as the file had it
    # Every statement read as the paste wrote it, in the block it wrote it in: repair only
    # undid the paste's wrapping (fences, prompts, line numbers, the indentation of a
    # function's body) or completed what was cut off; no code line blanked, none moved to
    # another block, no `else` read as an `if`.
    faithful: bool = False

    def may_hold_fix(self, fix: str) -> bool:
        """The text repair blanked names what `fix` would add and the rest does not:
        the user may have done the fix there, so a rule that saw it missing cannot tell."""
        code = fix.split("  #", 1)[0]
        names = {n for m in FIX_NAME.finditer(code) for n in m.groups() if n}
        return bool(names & self._only_cut)

    @cached_property
    def _only_cut(self) -> frozenset[str]:
        """The words of the blanked lines that the lines read do not have."""
        return frozenset(re.findall(r"\w+", self.removed)) - frozenset(re.findall(r"\w+", self.text))

    def note(self) -> str:
        """How a diagnostic of the repaired reading says so."""
        how = "read as a function's body" if self.indented else "read"
        if not self.changed:
            return f"{how}: a snippet that is not valid Python as it stands"
        return f"{how} after repairing {_lines(self.changed)} of a snippet that is not valid Python"


@dataclass
class _Text:
    """The text being repaired: its lines (never more, never fewer) and what was done."""

    lines: list[str]
    code_lines: int = 0
    header: bool = False
    changed: set[int] = field(default_factory=set)
    inserted: set[int] = field(default_factory=set)
    cut: int = 0  # code lines blanked by the steps that cut code
    shift: dict[int, int] = field(default_factory=dict)
    steps: dict[str, set[int]] = field(default_factory=dict)  # what was done -> the lines, in order of doing
    removed: list[str] = field(default_factory=list)
    reshaped: bool = False  # a code line blanked, moved to another block, or an arm re-read

    def source(self) -> str:
        return (HEADER if self.header else "") + "\n".join(self.lines)

    def blank(self, numbers: Iterable[int], step: str, counts: bool = True) -> bool:
        """Blank lines (1-based); False when that blanks nothing or passes the bound."""
        done = [n for n in numbers if self.lines[n - 1].strip()]
        if not done:
            return False
        if counts:
            self.cut += sum(_is_code(self.lines[n - 1]) for n in done)
            if self.cut > max(MIN_CUT, int(self.code_lines * MAX_CUT_SHARE)):
                return False
            self.reshaped = True
        for n in done:
            self.removed.append(self.lines[n - 1])
            self.lines[n - 1] = ""
            self.changed.add(n)
        self.say(step, done)
        return True

    def say(self, step: str, numbers: Iterable[int]) -> None:
        self.steps.setdefault(step, set()).update(numbers)


def repair(text: str) -> Repair | None:
    """The text read after repairs, or None when it needs none, cannot be
    repaired within the bounds, or is not a snippet's size."""
    lines = LINE_BREAK.split(text)
    if len(lines) > MAX_LINES or "\x00" in text:
        return None
    state = _Text(list(lines))
    for step in (_fences, _prompts, _numbers, _magics, _tracebacks):
        step(state)
    state.code_lines = sum(map(_is_code, state.lines))  # what the bound on cutting code counts
    for _ in range(MAX_ATTEMPTS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(state.source())
        except SyntaxError as exc:
            if not _next_step(state, exc):
                return None
            continue
        except (ValueError, RecursionError, MemoryError):
            return None
        if not state.changed and not state.header:
            return None  # it needed no repair: not ours to read
        if state.header:
            ast.increment_lineno(tree, -1)  # the function's line is line 0: the user's lines keep their numbers
        steps = tuple(f"{step} ({_lines(lines)})" for step, lines in state.steps.items())
        return Repair("\n".join(state.lines), tree, tuple(sorted(state.changed)), state.header,
                      frozenset(state.inserted), dict(state.shift), steps, "\n".join(state.removed),
                      faithful=not state.reshaped)
    return None


# The shapes of a paste, undone before the first parse (each only where its shape is seen).

def _fences(state: _Text) -> None:
    """Markdown: keep what is inside Python code fences, blank the rest. Only a text
    that begins as markdown does (a fence, or a line of prose that is not Python):
    a Python file whose docstrings hold fenced examples keeps its code."""
    if not any(FENCE.match(line) for line in state.lines):
        return
    first = next((line.strip() for line in state.lines if line.strip()), "")
    if not FENCE.match(first) and (first[:1] in "#'\"@" or _parses(first)):
        return
    inside = False
    python = False
    outside: list[int] = []
    for n, line in enumerate(state.lines, 1):
        fence = FENCE.match(line)
        if fence:
            if inside:
                inside = False
            else:
                inside, python = True, fence.group(2).lower() in PYTHON_FENCES
            outside.append(n)
        elif not (inside and python):
            outside.append(n)
    state.blank(outside, "markdown fences and the text outside them blanked", counts=False)


def _prompts(state: _Text) -> None:
    """A REPL or IPython transcript: prompts become spaces, output lines are blanked."""
    first = next((line for line in state.lines if _is_code(line)), "")
    if not (first.startswith(">>>") or first.startswith("In [")):
        return
    output: list[int] = []
    prompted: list[int] = []
    for n, line in enumerate(state.lines, 1):
        prompt = PROMPT.match(line)
        if prompt:
            state.lines[n - 1] = " " * prompt.end() + line[prompt.end():]
            prompted.append(n)
            state.changed.add(n)
        elif line.strip():
            output.append(n)
    state.say("REPL prompts read as spaces", prompted)
    if output:
        state.blank(output, "REPL output blanked", counts=False)


def _numbers(state: _Text) -> None:
    """An editor's or a pager's line numbers in front of every line: cut them."""
    matches = [(n, NUMBERED.match(line)) for n, line in enumerate(state.lines, 1) if line.strip()]
    numbered = [(n, m) for n, m in matches if m is not None]
    if len(numbered) < 2 or len(numbered) * 3 < len(matches) * 2:
        return
    offsets = {int(m.group(1)) - n for n, m in numbered}
    if len(offsets) != 1:  # not counting with the lines: numbers that are code
        return
    for n, m in numbered:
        state.lines[n - 1] = state.lines[n - 1][m.end():]
        state.shift[n] = m.end()
        state.changed.add(n)
    state.say("line numbers cut", [n for n, _ in numbered])


def _magics(state: _Text) -> None:
    """Notebook magics (`%timeit`, `%%time`) and shell lines (`!pip install`)."""
    magic = [n for n, line in enumerate(state.lines, 1) if MAGIC.match(line)]
    if magic:
        state.blank(magic, "notebook magics and shell lines blanked", counts=False)


def _tracebacks(state: _Text) -> None:
    """A traceback pasted with the code: from its first line to the exception's line."""
    found: list[int] = []
    n = 1
    while n <= len(state.lines):
        if not TRACEBACK.match(state.lines[n - 1]):
            n += 1
            continue
        indent = _indent(state.lines[n - 1])
        end = n + 1
        # its frames are indented under it; the exception's own line is not
        while end <= len(state.lines) and (not state.lines[end - 1].strip() or _indent(state.lines[end - 1]) > indent):
            end += 1
        found += range(n, min(end, len(state.lines)) + 1)
        n = end + 1
    if found:
        state.blank(found, "a pasted traceback blanked", counts=False)


# One step for what Python still refuses, chosen from its error.

def _next_step(state: _Text, exc: SyntaxError) -> bool:
    if exc.lineno is None:
        return False
    count = len(state.lines)
    line = min(max(exc.lineno - (1 if state.header else 0), 1), count)
    msg = exc.msg or ""
    if msg.startswith("expected an indented block"):
        return _body_lost_indent(state, msg) or _complete_header(state, msg, line)
    if msg.startswith("invalid character '…'") and _ellipsis_characters(state, line):
        return True
    if msg == "expected '('" and _def_parentheses(state, line):
        return True
    first = next((n for n, text in enumerate(state.lines, 1) if _is_code(text)), 0)
    if msg == "unexpected indent" and line == first and not state.header:
        state.header = True
        state.say("an indented snippet read as a function's body, from its first line of code", [first])
        return True
    if not _is_code(state.lines[line - 1]):  # Python points past the end, or at a blank line
        line = max((n for n in range(1, line + 1) if _is_code(state.lines[n - 1])), default=line)
    if msg == "unexpected indent" and _realign(state, line):
        return True
    if msg == "unexpected indent" or msg.startswith("unindent does not match"):
        # A run too deep by more than a stray space or two may be the body of a test the
        # paste left out (blanked below); a line that matches no level moves as a run.
        if _shift_run(state, line, msg == "unexpected indent"):
            return True
        step = "a line at an indentation its block does not have blanked, with its block"
        return state.blank(_block(state.lines, line, line), step)
    layout = _layout(state.lines)
    start, end, open_at_end = layout.statement(line, count)
    if msg.startswith("unterminated") and "string" in msg:
        # (the tokenizer may not see it open: Python names where the string was found to run out)
        detected = DETECTED.search(msg)
        last_code = max((n for n in range(1, count + 1) if _is_code(state.lines[n - 1])), default=0)
        if detected is None or int(detected.group(1)) - (1 if state.header else 0) >= last_code:
            if _close_cut_string(state, start, count):
                return True
    if not open_at_end and (_orphan_branch(state, start) or _split_run_together(state, start, end)
                            or _placeholders(state, start, end)):
        return True
    if open_at_end:
        if _close_after_whole_argument(state, start, count) or _close_after_last_whole_part(state, start, count):
            return True
        if _close_before_next_statement(state, start, count) or _close_cut_string(state, start, count):
            return True
        return state.blank(range(start, count + 1), "an unfinished statement at the end cut")
    if _opens_block(state.lines[end - 1], layout.comments.get(end)):
        end = _block(state.lines, start, end)[-1]
    if all(ELLIPSIS.match(state.lines[n - 1]) or not state.lines[n - 1].strip() for n in range(start, end + 1)):
        return state.blank(range(start, end + 1), "an ellipsis line blanked")
    return state.blank(range(start, end + 1), "a statement Python refuses blanked")


def _realign(state: _Text, line: int) -> bool:
    """A statement one or two spaces deeper than the statement above it, which opens
    no block (a paste's stray spaces: ` trainer.fit(...)` under `trainer = Trainer(...)`):
    it and the lines indented under it move left by those spaces, as the statement
    above stands. Deeper than that, it may be the body of a test left out of the
    paste, and it is blanked as before."""
    spans = [span for span in _layout(state.lines).spans if span[1] < line]
    if not spans:
        return False
    start, end = spans[-1]
    above = state.lines[start - 1]
    excess = _indent(state.lines[line - 1]) - _indent(above)
    if not 0 < excess <= MAX_STRAY_INDENT or _opens_block(state.lines[end - 1], None):
        return False
    block = [n for n in _block(state.lines, line, line) if state.lines[n - 1].strip()]
    if not _move_left(state, block, excess):
        return False  # (a line of the block not indented that far: not one stray run)
    state.say("a statement one or two spaces deeper than the one above re-aligned with it, with its block", block)
    return True


def _move_left(state: _Text, lines: list[int], by: int) -> bool:
    """Move these lines `by` columns left, the columns given back through `shift`; none
    is moved when one of them is not indented that far."""
    if any(state.lines[n - 1][:by].strip() for n in lines):
        return False
    for n in lines:
        state.lines[n - 1] = state.lines[n - 1][by:]
        state.shift[n] = state.shift.get(n, 0) + by
        state.changed.add(n)
    state.reshaped = True
    return True


def _shift_run(state: _Text, line: int, deeper: bool) -> bool:
    """A paste whose lines lost their common indentation part-way (`model = Net()`
    then ` model = nn.DataParallel(model)` one space in; an `else:` four spaces off
    its `if`): the line and those after it at its depth or deeper are moved left, as
    a run, to the depth of the statement before it (`deeper`: Python found the line
    too deep) or of the nearest enclosing level above it (it matched no level), so
    their statements are read rather than blanked (issue 41's heldout5: seven
    DataParallel lines lost this way). Columns are given back through `shift`."""
    depth = _indent(state.lines[line - 1])
    starts = [a for a, _ in _layout(state.lines[:line - 1]).spans]
    levels: list[int] = [0]
    for n in starts:
        indent = _indent(state.lines[n - 1])
        while levels and levels[-1] > indent:
            levels.pop()
        if not levels or levels[-1] < indent:
            levels.append(indent)
    if deeper:
        target = _indent(state.lines[starts[-1] - 1]) if starts else 0
    else:
        target = max((level for level in levels if level < depth), default=0)
    cut = depth - target
    run = [line]
    for n in range(line + 1, len(state.lines) + 1):
        text = state.lines[n - 1]
        if _is_code(text) and _indent(text) < depth:
            break
        run.append(n)
    run = [n for n in run if state.lines[n - 1].strip()]
    if cut <= 0 or not _move_left(state, run, cut):
        return False
    state.say("lines at an indentation their block does not have moved to the block's", run)
    return True


def _orphan_branch(state: _Text, start: int) -> bool:
    """An `elif x:` / `else:` pasted without its `if` (the thread quoted one arm): read
    as `if  x:` / `if 1:`, in place (the keyword and its stand-in have the same width),
    so the arm's body is read rather than blanked. The stand-in is repair's, so no rule
    fires on an `else` line."""
    text = state.lines[start - 1]
    head = ORPHAN.match(text)
    if head is None:
        return False
    word = head.group(1)
    state.lines[start - 1] = text[:head.start(1)] + ("if  " if word == "elif" else "if 1") + text[head.end(1):]
    state.changed.add(start)
    state.reshaped = True
    if word == "else":
        state.inserted.add(start)
    state.say("an `elif` / `else` without its `if` read as an `if`", [start])
    return True


def _split_run_together(state: _Text, start: int, end: int) -> bool:
    """Two statements pasted onto one line (`model = DataParallel(model)  model.load(c)`:
    the line break was lost): a `;` in the first space of the gap, kept only when the
    line then parses."""
    if start != end:
        return False
    text = state.lines[start - 1]
    for gap in RUN_TOGETHER.finditer(text):
        joined = text[:gap.start(1)] + ";" + text[gap.start(1) + 1:]
        if _parses(joined.strip()):
            state.lines[start - 1] = joined
            state.changed.add(start)
            state.say("two statements on one line read apart", [start])
            return True
    return False


def _placeholders(state: _Text, start: int, end: int) -> bool:
    """A paste's placeholders for what it left out (`torch.nn.DataParallel({your net})`,
    `model = [YOUR MODEL]`, `<path to data>`): each read as a name of its own width, so
    the statement around it is read rather than blanked (issue 41's heldout8: a recipe
    with `{your net}`). Kept only when the statement then parses; what the name stands for
    is unknown, so no rule's verdict on it claims certainty (not `faithful`)."""
    lines = state.lines[start - 1:end]
    read = [PLACEHOLDER.sub(lambda m: "_" + re.sub(r"\W", "_", m.group(0)[1:-1]) + "_", line) for line in lines]
    if read == lines or not _parses(textwrap.dedent("\n".join(read))):
        return False
    done = [n for n, (old, new) in enumerate(zip(lines, read), start) if old != new]
    for n in done:
        state.lines[n - 1] = read[n - start]
        state.changed.add(n)
    state.reshaped = True
    state.say("a placeholder read as a name", done)
    return True


def _body_lost_indent(state: _Text, msg: str) -> bool:
    """A `def` whose body was pasted at the def's own indentation (lint heldout19 u002: a
    method's docstring and its lines at the method's depth, the next `def` after them): the
    lines up to the next `def` / `class` / decorator at that depth, a line less deep, or two
    blank lines, are indented under it, the columns given back through `shift`. Not where the
    next line is itself a definition (a body cut off: `pass` is added)."""
    said = HEADER_LINE.search(msg)
    header = int(said.group(1)) - (1 if state.header else 0) if said else 0
    if not 0 < header < len(state.lines):
        return False
    text = state.lines[header - 1]
    if not DEF_LINE.match(text) or not text.rstrip().endswith(":"):
        return False
    depth = _indent(text)
    run: list[int] = []
    blanks = 0
    for n in range(header + 1, len(state.lines) + 1):
        line = state.lines[n - 1]
        if not line.strip():
            blanks += 1
            if blanks >= 2:
                break
            continue
        blanks = 0
        if _is_code(line) and (_indent(line) < depth or (_indent(line) == depth and ENDS_BODY.match(line))):
            break
        run.append(n)
    code = [n for n in run if _is_code(state.lines[n - 1])]
    if not code or _indent(state.lines[code[0] - 1]) != depth:
        return False
    for n in run:
        state.lines[n - 1] = "    " + state.lines[n - 1]
        state.shift[n] = state.shift.get(n, 0) - 4
        state.changed.add(n)
    state.reshaped = True
    state.say("a function's body pasted at its def's indentation indented under it", run)
    return True


def _complete_header(state: _Text, msg: str, line: int) -> bool:
    """`if __name__ == "__main__":` with its body cut off: `pass` after the `:`."""
    said = HEADER_LINE.search(msg)
    start = min(int(said.group(1)) - (1 if state.header else 0), line) if said else line
    layout = _layout(state.lines)
    for n in range(max(start, 1), line + 1):
        comment = layout.comments.get(n)
        code = state.lines[n - 1][:comment].rstrip() if comment is not None else state.lines[n - 1].rstrip()
        if code.endswith(":"):  # (an `else:` read as `if 1:` is one of repair's lines, and still needs it)
            rest = state.lines[n - 1][len(code):]
            state.lines[n - 1] = f"{code} pass{rest}"
            state.inserted.add(n)
            state.changed.add(n)
            state.say("`pass` added to a body cut off", [n])
            return True
    return False


def _ellipsis_characters(state: _Text, line: int) -> bool:
    """`Accelerator(…)`: an elision written with the ellipsis character, which Python
    refuses, read as Python's `...` on every line (the same three bytes in UTF-8, so the
    columns ast gives are unchanged): the statements are read rather than blanked
    (heldout3 m028: a recipe whose every call elides its arguments so)."""
    found = [n for n, text in enumerate(state.lines, 1) if "…" in text]  # (all at once: one parse, not one a line)
    if line not in found:
        return False
    for n in found:
        state.lines[n - 1] = state.lines[n - 1].replace("…", "...")
        state.changed.add(n)
    state.say("the ellipsis character read as `...`", found)
    return True


def _def_parentheses(state: _Text, line: int) -> bool:
    """`def train:`: a page that dropped every `()` of the code (`optimizer.zero_grad`)
    dropped the def's too; read as `def train():`, so that its name is defined."""
    text = state.lines[line - 1]
    head = DEF_NO_PARENS.match(text)
    if head is None:
        return False
    state.lines[line - 1] = text[:head.end(1)] + "()" + text[head.end(1):]
    state.changed.add(line)
    state.say("a `def` without its parentheses read with them", [line])
    return True


def _close_before_next_statement(state: _Text, start: int, count: int) -> bool:
    """A bracket left open mid-text (`transforms.Compose([` whose `])` the paste
    lost), where a later line at the statement's own indentation or less starts a new
    statement (`name = ...`, `for ...:`, `import ...`): the brackets are closed at the end
    of the last code line before it (a line of its own after the opening one, ending
    after a whole part), when the statement then parses, so that the rest of the file
    is read rather than cut (heldout6 s010: a DataParallel above such a
    line was lost with the whole file). Lines never move: the closers go on that line."""
    indent = _indent(state.lines[start - 1])
    nxt = next((n for n in range(start + 1, count + 1) if _is_code(state.lines[n - 1])
                and _indent(state.lines[n - 1]) <= indent and NEW_STATEMENT.match(state.lines[n - 1])), None)
    if nxt is None:
        return False
    last = max((n for n in range(start, nxt) if _is_code(state.lines[n - 1])), default=0)
    if last <= start:
        return False  # (`x = foo(1,` and then other statements: what the call was given is not shown)
    return _close_on(state, start, last, last, "a bracket left open before the next statement closed")


def _close_cut_string(state: _Text, start: int, count: int) -> bool:
    """A statement cut off inside a string at the end of the text (`run_py = "python -m
    torch.distributed.launch ... run.py --ro`): the string closed where the text ends, and
    the brackets around it, when that parses. What the string holds is the user's, cut;
    the code around it is read rather than blanked (heldout3 m002: the launch command
    lost with its line)."""
    last = max((n for n in range(start, count + 1) if _is_code(state.lines[n - 1])), default=0)
    if not last or last in state.inserted:
        return False
    before = state.lines[last - 1]
    line = before.rstrip()
    if line.endswith("\\"):
        line = line[:-1]  # (a continuation cut off: the string ends before it)
    for quote in STRING_ENDS:
        for closers in STRING_CLOSERS:
            state.lines[last - 1] = line + quote + closers
            if _parses("\n".join(state.lines[start - 1:count]).strip()):
                state.changed.add(last)
                state.inserted.add(last)
                state.say("a string cut off at the end closed", [last])
                return True
    state.lines[last - 1] = before
    return False


def _close_after_whole_argument(state: _Text, start: int, count: int) -> bool:
    """A call or literal cut off after a whole argument (`FSDP(model,\n device_id=rank,`):
    its brackets closed on its last line, so that what was written is read. Not a
    statement cut inside a string, a name or an operator: what it was going to be is
    not known. Kept only when the statement then parses."""
    last = max((n for n in range(start, count + 1) if _is_code(state.lines[n - 1])), default=0)
    if not last or last in state.inserted:
        return False
    return _close_on(state, start, last, count, "an unfinished statement at the end closed")


def _close_on(state: _Text, start: int, last: int, end: int, step: str) -> bool:
    """The brackets the statement from `start` leaves open by line `last` closed at the
    end of that line's code, when it ends after a whole part (a comma, a bracket, a
    string) and lines start..end then parse."""
    closers = _open_brackets(state.lines[start - 1:last])
    if not closers:
        return False
    line = state.lines[last - 1]
    comment = _layout(state.lines[last - 1:last]).comments.get(1)
    code = (line[:comment] if comment is not None else line).rstrip()
    if not CLOSABLE.search(code):
        return False
    state.lines[last - 1] = code + closers + line[len(code):]
    if not _parses("\n".join(state.lines[start - 1:end]).strip()):
        state.lines[last - 1] = line
        return False
    state.changed.add(last)
    state.inserted.add(last)
    state.say(step, [last])
    return True


def _open_brackets(lines: list[str]) -> str:
    """The closing brackets the lines leave owed, innermost first ("" when a string is open)."""
    stack: list[str] = []
    pairs = {"(": ")", "[": "]", "{": "}"}
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if tok.type == tokenize.OP and tok.string in pairs:
                stack.append(pairs[tok.string])
            elif tok.type == tokenize.OP and tok.string in ")]}":
                if not stack or stack.pop() != tok.string:
                    return ""
    except tokenize.TokenError as exc:
        if "string" in str(exc.args[0]):
            return ""
    except (SyntaxError, ValueError, RecursionError):
        return ""
    return "".join(reversed(stack))


@dataclass
class _Layout:
    """Where the logical lines (statements) of a text start and end, as far as it tokenizes."""

    spans: list[tuple[int, int]]
    open_from: int | None  # a statement still open where tokenizing stopped
    open_at_end: bool  # ... and it stopped at the end of the text (an unclosed bracket or string)
    stopped: int  # the line where tokenizing stopped (0: it did not)
    comments: dict[int, int]  # line -> the column where its comment starts

    def statement(self, line: int, count: int) -> tuple[int, int, bool]:
        """The first and last line of the statement holding `line`, and whether it runs off the end."""
        for start, end in self.spans:
            if start <= line <= end:
                return start, end, False
        if self.open_from is not None and self.open_from <= line:
            if self.open_at_end:
                return self.open_from, count, True
            return self.open_from, max(line, self.stopped), False
        return line, line, False


def _layout(lines: list[str]) -> _Layout:
    spans: list[tuple[int, int]] = []
    comments: dict[int, int] = {}
    start: int | None = None
    skip = (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER)
    try:
        for tok in tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.start[1]
            if tok.type == tokenize.NEWLINE:
                if start is not None:
                    spans.append((start, tok.start[0]))
                start = None
            elif start is None and tok.type not in skip:
                start = tok.start[0]
    except tokenize.TokenError as exc:  # an unclosed bracket or string
        where = exc.args[1][0] if len(exc.args) > 1 and isinstance(exc.args[1], tuple) else len(lines)
        # at the end of the text ("EOF in multi-line ..."), or (Python 3.12's tokenizer stops at
        # an unterminated string) on the last line of code
        at_end = "EOF" in str(exc.args[0]) or not any(_is_code(line) for line in lines[where:])
        return _Layout(spans, start if start is not None else where, at_end, where, comments)
    except (SyntaxError, ValueError, RecursionError) as exc:  # a bad indent or token mid-text
        where = getattr(exc, "lineno", None) or len(lines)
        return _Layout(spans, start if start is not None else where, False, where, comments)
    return _Layout(spans, None, False, 0, comments)


def _block(lines: list[str], start: int, end: int) -> list[int]:
    """Lines start..end and the lines indented deeper than line `start` that follow them."""
    indent = _indent(lines[start - 1])
    last = end
    for n in range(end + 1, len(lines) + 1):
        text = lines[n - 1]
        if not _is_code(text):
            continue
        if _indent(text) <= indent:
            break
        last = n
    return list(range(start, last + 1))


def _opens_block(line: str, comment: int | None) -> bool:
    code = line[:comment] if comment is not None else line
    return code.rstrip().endswith(":")


def _parses(line: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(line)
    except (SyntaxError, ValueError):
        return False
    return True


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _is_code(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#")


def _lines(numbers: Iterable[int]) -> str:
    """`line 4`, `lines 3, 24-26`: ranges joined, at most 6 shown."""
    ordered = sorted(set(numbers))
    runs: list[tuple[int, int]] = []
    for n in ordered:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    shown = [f"{a}" if a == b else f"{a}-{b}" for a, b in runs[:6]]
    more = f" and {len(runs) - 6} more" if len(runs) > 6 else ""
    word = "line" if len(ordered) == 1 else "lines"
    return f"{word} {', '.join(shown)}{more}"


def _close_after_last_whole_part(state: _Text, start: int, count: int) -> bool:
    """A statement cut off inside its brackets at the end of the text (`y = [all_gather(x) for x in`):
    keep it up to its last whole part and close the brackets left open (`y = [all_gather(x)]`),
    rather than lose every call it makes (issue 41's dev6: a gather cut mid-comprehension).
    Tries the cut points from the end back, at most CLOSE_TRIES of them, and keeps the first
    whose text parses; what it drops is kept in `removed` (a fix may have been there)."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    tokens: list[tuple[tokenize.TokenInfo, str, bool]] = []  # each token, the closers open after it, a call's among them
    stack: list[tuple[str, bool]] = []  # (closer, the bracket is a call's argument list)
    previous: tokenize.TokenInfo | None = None
    text = "\n".join(state.lines[start - 1:count]) + "\n"
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.OP and tok.string in pairs:
                call = tok.string == "(" and previous is not None and (
                    (previous.type == tokenize.NAME and not keyword.iskeyword(previous.string))
                    or previous.string in (")", "]"))
                stack.append((pairs[tok.string], call))
            elif tok.type == tokenize.OP and tok.string in pairs.values() and stack:
                stack.pop()
            if tok.type not in (tokenize.NL, tokenize.COMMENT, tokenize.NEWLINE, tokenize.ENDMARKER):
                tokens.append((tok, "".join(c for c, _ in reversed(stack)), any(call for _, call in stack)))
                previous = tok
    except (tokenize.TokenError, SyntaxError, ValueError):
        pass  # the unclosed bracket: what was read is what can be kept
    saved = list(state.lines)
    for tok, closers, in_call in list(reversed(tokens))[:CLOSE_TRIES]:
        if not closers or in_call:
            continue  # closing a call cut mid-arguments would make a call the user did not write
        row, col = tok.end
        last = start + row - 1
        kept = state.lines[last - 1][:col] + closers
        state.lines[last - 1] = kept
        for n in range(last + 1, count + 1):
            state.lines[n - 1] = ""
        if _parses(state.source()):
            state.removed += [saved[last - 1][col:]] + [saved[n - 1] for n in range(last + 1, count + 1)]
            done = [last] + [n for n in range(last + 1, count + 1) if saved[n - 1].strip()]
            state.changed.update(done)
            state.say("an unfinished statement at the end closed after its last whole part", done)
            return True
        state.lines[:] = saved
    return False
