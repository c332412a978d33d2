"""Lines that speak of an error in words no rule of gpudoctor reads.

A log with no failure gpudoctor can name and no end is undecided. "No line shows a failure"
is only true of it when no line even speaks of one: an error quoted in prose ("then I get
Error using gpuArray ..."), another runtime's message (MATLAB, a C++ framework's own
format, a driver's event) or a program's own words ("Training failed: ...") are failure
lines a reader sees at once. gpudoctor cannot tell whether one of them ended the run, so
it still does not decide; but it says which lines they are, instead of saying there are
none (`log-inconclusive`, case `mentions`).

What is left out is what speaks of errors without reporting one: a count that is zero
("0 errors", "failed: 0"), a metric (a training's "error 0.031", "error rate"), a line of
code (`except Exception:`, `raise ValueError(...)`, a `# comment`; not a Markdown heading's `## `, which a
thread puts before a program's line) and warnings, which a run survives far
more often than not (the patterns read the warnings that matter), lines logged at INFO or DEBUG
level, and an error the program says it went on from ("... going to /tmp instead", "falling back").

Which lines are shown, when there are more than KEPT: the ones that decide most. A program's
exception line (`ValueError: ...`, even inside a person's sentence) before the program's other
lines, and those before a person's sentences about them; within each, the later line first: a
thread that pastes one error, then another after a change, ends with the one that stands
(heldout7's qlora#96: the device-mismatch sentence first, the ValueError the user hit after
fixing it last).
"""

from __future__ import annotations

import re
from typing import Callable

# The words the prefilter already lets through (knowledge/prefilter.py): a line without one
# never reaches the reader.
SPEAKS = re.compile(
    r"\b(?:errors?|fail(?:ed|s|ure|ures)?|fatal|exceptions?|abort(?:ed|ing)?|killed|segmentation fault"
    r"|timed out|refused|invalid|not found|no such file or directory|permission denied)\b"
    # an exception's class, named in a person's sentence or a program's line ("`ValueError: Expected ...`")
    r"|(?-i:\b[A-Z]\w*(?:Error|Exception)\b)",
    re.IGNORECASE,
)
NOT_A_REPORT = re.compile(
    r"warn"  # Warning:, WARN, UserWarning, FutureWarning: what a run survives
    r"|\b(?:0|no|zero|without)\s+(?:errors?|failures?|failed|exceptions?)\b"
    r"|\b(?:errors?|failures?|failed|exceptions?)\s*[:=]\s*0\b(?![.\d])"
    r"|\b(?:error|failure)\s*(?:rate|bar|metric|signal|risk)\b"
    # a test the suite expected to fail (unittest's "expected failure", pytest's xfail): the suite's own pass
    r"|\bexpected failure\b|\bxfail(?:ed)?\b"
    r"|\b(?:errors?|err)\s*[:=]?\s*[-+]?\d*\.\d+"  # a metric: "val error: 0.031"
    r"|^\s*(?:except\b|raise\b|def\b|class\b|try:|if\b|elif\b|return\b|import\b|from\s+\S+\s+import\b|assert\b|#(?!#+ )|//)"
    r"|\bif\s+\w*(?:error|fail)"
    # torchrun's summary's own lines ("train.py FAILED", "Failures:"): the launcher's report, read by its patterns
    r"|^\s*(?:\S+ (?-i:FAILED)|Failures:)\s*$"
    # a C++ exception's backtrace and its origin ("frame #0: c10::Error::Error(...)", "Exception raised from recvBytes at
    # ..."): parts of a report the signs read by its shape, told by its message line (a store read after a peer left at exit
    # is noise the store patterns tell, pytorch/torchft's heartbeat monitor)
    r"|^\s*(?:frame #\d+: |Exception raised from \w+ at )"
    # a line a logger wrote at INFO or DEBUG level ("NCCL INFO NET/Plugin: ... No such file or directory")
    r"|(?-i:\b(?:INFO|DEBUG)\b)"
    # an error the program says it went on from (slurmstepd's "couldn't chdir to ...: going to /tmp instead")
    r"|\b(?:instead|falling back|falls? back|will retry|retrying|ignoring|skipping)\b"
    # an error foretold, not reported: what would happen if the run went on that way (transformers' tokenizer: "Token indices
    # sequence length is longer than the specified maximum sequence length for this model (278528 > 131072). Running this
    # sequence through the model will result in indexing errors", dev7w:
    # https://github.com/ColorDavid/ARPO/blob/26f964e23098c2c4b5aed83abe390b223773ef55/logs/nohup.out); the run's own report
    # of the error, when it came, is its own line
    # (and transformers' "You are using a model of type llama to instantiate a model of type mobilevlm. This is not supported for
    # all configurations of models and can yield errors.", dev10:
    # https://github.com/Jingchensun/MobileVLM/blob/a0c6edbfaae9cf7b5d2b703a444940219813c9e0/train.out)
    r"|\b(?:will|would|may|might|could|can) (?:\w+ )?(?:result in|lead to|cause|yield)\b",
    re.IGNORECASE,
)
# A line that says only that something ended, not what failed: a launcher's or a job runner's report
# ("the job has been aborted", "process exited with a non-zero exit code"): after the lines that say what.
ONLY_ENDED = re.compile(r"^(?!.*\b(?:not found|no such file|permission denied|cannot|can't|could not|unable|invalid|refused)\b)"
                        r".*\b(?:abort(?:ed|ing)?|terminat(?:ed|ing)|killed|exit(?:ed)? (?:code|status)|non-zero|exit code)\b", re.IGNORECASE)
# Words that say what failed, beyond "an error" ("--> Error", "the error occurred" say only that one did).
WHAT_FAILED = re.compile(
    r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\s*:\s*\S"
    r"|\b(?:not found|no such file|permission denied|can't|cannot|could not|couldn't|unable to|invalid|refused|out of memory)\b"
    r"|\b(?:failed|error|fatal)\s*(?:to|with|while|:)\s*\S",
    re.IGNORECASE,
)
# A program's exception line: its class and its message ("ValueError: Expected sequence of length 663").
EXCEPTION_LINE = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\s*:\s*\S")
KEPT = 3  # lines shown; the count says how many there were
HELD = KEPT * 4  # lines held while the log is read: the first half of them, and the latest ones
# A person's sentence about the error ("When I train with 4 GPUs, an error occurs:") is true but
# not the error itself: the program's own lines are shown before it.
PROSE = re.compile(
    r"^\W*(?:i|i'm|i've|my|we|when|hello|hi|how|why|it|this|the following|but|then|trying|appears|seems|after|so)\b",
    re.IGNORECASE,
)


# A command-line flag whose name holds the word ("--max-failures 3", "--ignore-errors", "-fail-fast"): a setting, no report.
FLAG = re.compile(r"(?<![\w-])--?[\w-]*(?i:fail|error|exception|abort)[\w-]*")


# An error that is a quantity a program measures, named by what it measures ("The program finished, evaluating
# reconstruction error...", dev10: https://github.com/r44/10605_hw7/blob/c652ace15f2b245951bb1eed7d6bbe4f28d040bc/eval.out;
# "mean squared error", "L2 relative error"): the words are left out, the rest of the line is still read ("RuntimeError:
# reconstruction error is nan" speaks of one by its class). Not where a message follows it ("reconstruction error: file
# missing").
MEASURED = re.compile(
    r"\b(?:reconstruction|(?:mean |root mean )?squared|absolute|relative|quantization|approximation|rounding|truncation"
    r"|generalization|interpolation|projection|regression|classification|top-?\d+|standard) errors?\b(?!\s*:\s*[^\s\d.+-])",
    re.IGNORECASE,
)
# A line that is data: a printed list or tuple of short quoted strings (a tokenizer's words, "[' forget', ' forgot', ' fail',
# ' forgive', ...]" and "[' final', ' fatal', ' financial', ...]", dev10:
# https://github.com/3rdAT/Mutual_Information/blob/0be2f146cf5d66156139881dae694d00d5663ba4/log.out): a failure word in it is
# one item of the data, not a report. Not a list that holds a message (an item longer than DATA_ITEM characters, or a line
# with anything but items, commas and brackets: "errors: ['rank 1 failed: connection refused']").
DATA_ITEM = 24
DATA_ITEMS = 3  # at least
QUOTED_ITEM = re.compile(r"'(?:[^'\\\n]|\\.){0,%d}'|\"(?:[^\"\\\n]|\\.){0,%d}\"" % (DATA_ITEM, DATA_ITEM))


def data_literal(text: str) -> bool:
    """The line is a printed list or tuple of short quoted strings, nothing else (DATA_ITEM's why)."""
    line = text.strip()
    if not line or line[0] not in "[(" or line.count(",") < DATA_ITEMS - 1:
        return False
    rest, items = QUOTED_ITEM.subn(" ", line)
    return items >= DATA_ITEMS and not rest.strip(" \t,[]()")


def speaks_of_error(text: str) -> bool:
    """Whether the line reports an error or a failure in words, by what it says (see the module's why); the words inside a
    flag's name, and an error named by what it measures (MEASURED), are not read; a line of data (`data_literal`) is none."""
    if "-" in text:
        text = FLAG.sub("", text)
    if " error" in text.lower():
        text = MEASURED.sub("", text)
    return bool(SPEAKS.search(text)) and not NOT_A_REPORT.search(text) and not data_literal(text)


# A line that ends on its failure word, as a status does: "Test vid2vid failed", "vid2vid: failure", "then it crashed!", "an
# error." Beside a run's end it keeps the run from being called healthy (commands/diagnose/analyse.py, case `ended-but`); a word
# inside the line (a setting, a comment, prose that says the error is gone) does not.
ENDS_FAILED = re.compile(r"\b(?:fail(?:ed|s|ure)?|errors?|crash(?:ed)?|abort(?:ed)?)\W*$", re.IGNORECASE)


def ends_in_failure(text: str) -> bool:
    """The line (a flag's name aside) ends on a failure word."""
    return bool(ENDS_FAILED.search(FLAG.sub("", text) if "-" in text else text))


def only_ended(text: str) -> bool:
    """The line says only that something ended (a launcher's report), not what failed."""
    return bool(ONLY_ENDED.search(text))


def says_what_failed(text: str) -> bool:
    """A program's line that says what failed (not a person's sentence, not only that something ended): the
    lead a launcher's report of a failed rank points to (knowledge/story.py `spoken_before`)."""
    return bool(WHAT_FAILED.search(text)) and not PROSE.search(text) and not only_ended(text)


# A probe a script runs as it starts, to print what it runs from, and its tool's answer when there is none: git's "fatal: not a
# git repository (or any of the parent directories): .git" (DINO's and many training scripts' `git rev-parse HEAD`, printed at
# every start, dev10: https://github.com/SongxiYoung/dino-main/blob/8befeebfaf3c4d35a4dbdfa38d9182b1b8c6e3bb/train.out). Where the
# run went on past it (a progress or stage line after it, its end, or PROBE_WENT_ON lines of its output) it stopped nothing; where the log stops at it, it may be the failure
# (a script that needs the commit) and stays a line that speaks of an error.
PROBE_ANSWER = re.compile(r"^\s*fatal: not a git repository\b", re.IGNORECASE)
PROBE_WENT_ON = 20  # lines the log goes on for after it (the run's own output) that show it went on, where no progress reader saw any


def went_past_probes(lines: list[tuple[int, str]], count: int, went_on: Callable[[int], bool]) -> tuple[list[tuple[int, str]], int]:
    """(the lines held, their count) without the probes' answers (PROBE_ANSWER) the run went on past (`went_on(line)`); as they
    were where every line held is one and more were counted than held (what was not held is not known)."""
    kept = [seen for seen in lines if not (PROBE_ANSWER.search(seen[1]) and went_on(seen[0]))]
    if len(kept) == len(lines) or (not kept and count > len(lines)):
        return lines, count
    return kept, count - (len(lines) - len(kept))


def hold(lines: list[tuple[int, str]], seen: tuple[int, str]) -> None:
    """Add a line to those held (at most HELD): past that, the first HELD // 2 stay and the
    latest ones replace the others, so that the lines near the log's end are there to show."""
    lines.append(seen)
    if len(lines) > HELD:
        del lines[HELD // 2]


def lead_first(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The lines in the order they decide (see the module's why): exception lines, then the
    program's other lines (those that only say something ended after those that say what failed),
    then a person's sentences; the later line first in each group."""
    def rank(seen: tuple[int, str]) -> tuple[int, int]:
        text = seen[1]
        group = 0 if EXCEPTION_LINE.search(text) else 3 if PROSE.search(text) else 2 if ONLY_ENDED.search(text) else 1
        return group, -seen[0]

    return sorted(lines, key=rank)


# A person's sentence that names an error without reporting one (Eli-YiLi/PMM#3: https://github.com/Eli-YiLi/PMM/issues/3,
# the maintainer's "It seems not related to GPU, because GPU reports "CUDA out of memory" if batch size is too large." was
# read as the GPU's out-of-memory, where the run's own line was a pinned host allocation's): a sentence (a person's words
# around the name: PROSE's start, the first person, a question) that negates, asks or supposes ("not", "isn't", "if", "whether",
# a question mark) and quotes no output (no "SomeError: ..." or "error: ..." with its message) is no evidence of that error.
# A person's sentence that holds the program's line ("I don't know why I get RuntimeError: CUDA out of memory. Tried to
# allocate ...") still is, and so is one that says it happened ("When I run on 4 GPUs I get CUDA out of memory").
# (the first person singular only: a program's own message speaks to "you" and of "we", as DDP's "This error indicates that
# your module has parameters that were not used ... If you already have done the above two steps" and ProcessGroupNCCL's
# "we will try our best to dump the debug info" do; and a line a logger or a launcher prefixed is output, the caller's test)
PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|me|my)\b|^\W*(?i:it|that|there)\b")
HEDGED = re.compile(r"\b(?:not|never|no longer|if|whether|unless|instead of|rather than)\b|n't\b", re.IGNORECASE)
# a question whether it is that error ("Is this a CUDA out of memory error?"); not one that reports it ("why do I get ...?",
# "I got error "expected batch size 34 target batch size 75" when I used 2 GPU?", hiyouga/LLaMA-Factory's thread in diagA12)
ASKED = re.compile(r"^\W*(?:is|are|was|could|can|might|may|does|do|would|should)\b.*\?\W*$", re.IGNORECASE)
# A supposition in the clause before the name, whoever says it: a reader's guess at what a run may meet, no report of this
# run (microsoft/Swin-Transformer#20's comment "Without setting batch-size explicitly you might meet an error "CUDA out of
# memory"." above another user's import-time traceback, heldout22's wrong case 28)
SUPPOSED = re.compile(r"\byou\s+(?:might|may|could|would)\b|\b(?:maybe|perhaps|possibly|probably)\b", re.IGNORECASE)
QUOTED = re.compile(r"\"[^\"]*(?:\"|$)|`[^`]*(?:`|$)")
OUTPUT_QUOTED = re.compile(r"\b(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception)\s*:\s*\S|\b(?i:error|failed)\s*:\s*\S")


def said_in_prose(text: str, start: int = 0, end: int = 0) -> bool:
    """The line is a person's sentence that negates, asks about or supposes an error it names (the name at text[start:end],
    what a pattern matched), and quotes none of the program's output: no evidence that the run hit that error (it is read as
    a line that speaks of one). The hedge is in the person's words around the name: not inside the name or a quote
    ("srun: not found" is the error's own words); a supposition (SUPPOSED) in the clause before the name, whoever says it.
    Its regexes name no digit (`prefilter.digit_blind`: tests/test_knowledge_shapes.py), so the answer is the same for the
    text with its digits made 0: remembered by that shape, for a line a log repeats with other numbers (a metrics record
    per step that a rule reads every time)."""
    if len(text) > PROSE_SHAPE_LONGEST:
        return _said_in_prose(text, start, end)
    key = (text.translate(ZERO_DIGITS), start, end)
    said = _PROSE_SAID.get(key)
    if said is None:
        if len(_PROSE_SAID) >= PROSE_SHAPES:
            _PROSE_SAID.clear()
        said = _PROSE_SAID[key] = _said_in_prose(text, start, end)
    return said


ZERO_DIGITS = str.maketrans("123456789", "000000000")
PROSE_SHAPES = 4096  # answers remembered (then forgotten all at once)
PROSE_SHAPE_LONGEST = 1024  # a longer text is not remembered (at most 4 MB held)
_PROSE_SAID: dict[tuple[str, int, int], bool] = {}
# the regexes `said_in_prose` reads a text with (each must name no digit: its answers are remembered by the text's shape)
PROSE_REGEXES = ("OUTPUT_QUOTED", "SUPPOSED", "ASKED", "PROSE", "PERSON", "QUOTED", "HEDGED")


def _said_in_prose(text: str, start: int, end: int) -> bool:
    if OUTPUT_QUOTED.search(text):
        return False
    if SUPPOSED.search(clause_before(text, start)):
        return True
    if not (ASKED.search(text) or PROSE.search(text) or PERSON.search(text)):
        return False
    around = QUOTED.sub(" ", text[:start] + " " + text[end:])
    return bool(ASKED.search(text) or HEDGED.search(around))


def clause_before(text: str, at: int) -> str:
    """The words of text[:at] since the last sentence's or clause's end."""
    return text[max(text.rfind(c, 0, at) for c in ".;!?") + 1 : at]


def quoted_in_sentence(text: str, at: int) -> bool:
    """The error whose words start at text[at] is inside a quote that a person's words open ('on Windows "RuntimeError: ...',
    'then I get `CUDA error: ...`'): a quote mark opened before it and not closed, after words of the sentence."""
    before = text[:at]
    opened = max(before.rfind(mark) for mark in '"`“')
    if opened < 0 or (before[opened] != "“" and before.count(before[opened]) % 2 == 0):
        return False
    return len(re.findall(r"[A-Za-z]{2,}", before[:opened])) >= 2  # (words of a sentence: not a frame's `File "`)
