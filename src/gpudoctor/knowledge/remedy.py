"""What an error message already says to do.

Many messages state their own remedy ("try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
"Please set `find_unused_parameters=True`", "consider passing CUDA_LAUNCH_BLOCKING=1",
"see https://…", "export NCCL_P2P_DISABLE=1"). For a failure no pattern knows, that sentence,
quoted with its line, is a better fix than any generic advice. Only the failure's own message and
the lines that continue it are read, never the rest of the log.

A log with no failure a rule names is read the same way (issue 35, item 3): the first line no rule read that
is logged at error level, speaks of an error, or is a warning that names a limit the run met (a version
lower than it needs, a feature not supported, a library that could not load), and states its own remedy
(lora-scripts' "WARNING Torch version is lower than 2.3.0, which may not be able to train FLUX model
properly. Consider upgrading to a newer version.", Akegarasu/lora-scripts#501; onnxruntime's "... CUDA_PATH is
set but CUDA wasn't able to be loaded. Please install the correct version of CUDA and cuDNN ..."). A
deprecation notice (what a later release will change) and a warning that names no limit are not read: a
run survives them, and their advice is not the failure's.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Iterable, Optional

# The start of a sentence that tells the reader what to do.
ADVICE = re.compile(
    r"(?<![\w-])(?:"
    r"you (?:can|could|may|might|should|must|need to|will need to|have to|may want to|might want to) (?:also |either |now )?\w+|"
    r"please (?!note\b|be aware\b|wait\b|understand\b|be patient\b|stand by\b|hold on\b|ignore\b|help\b)\w+|"
    r"(?:maybe |(?:to (?:fix|solve|resolve|avoid|debug|enable|disable) (?:this|that|it)[^,.:;]{0,40}[,:]?\s*))?"
    r"(?:try(?:ing)? (?:to )?(?:setting|set|using|use|passing|pass|running|run|installing|install|upgrading|upgrade|"
    r"reinstalling|reinstall|reducing|reduce|increasing|increase|adding|add|calling|call|lowering|lower|raising|raise|"
    r"disabling|disable|enabling|enable|updating|update|specifying|specify|changing|change|removing|remove)|"
    r"consider (?:setting|using|passing|running|installing|upgrading|reducing|increasing|adding|calling|lowering|"
    r"disabling|enabling|updating|specifying|changing|removing|making)|"
    r"(?:please )?(?:set|use|pass|install|upgrade|reinstall|update|specify|ensure|make sure|check|call|run|rerun|re-run|refer to|see|visit|read|add|downgrade|report)\b|"
    r"export [A-Z_][A-Z0-9_]*=|"
    r"(?:the )?(?:easiest|simplest|best|recommended|only|usual) (?:method|way|fix|solution|option) is to \w+|"
    r"hint: |did you mean))",
    re.IGNORECASE,
)
# The bare imperatives above say something only after "please"/"you can"/"to fix this", at the
# start of a sentence, or when they name a setting, a flag or a link.
BARE_VERB = re.compile(r"^(?:set|use|pass|install|upgrade|reinstall|update|specify|ensure|make sure|check|call|run|rerun|re-run|refer to|see|visit|read|add|downgrade|report)\b", re.IGNORECASE)
CONCRETE = re.compile(r"https?://|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|`[^`]+`|\w=\S|--\w|\b\w+\(\)|\w+\.\w+\(|pip install|conda install")
# A clause after a comma that sets a variable by its name and value: hydra's "Error locating target 'x', set env var
# HYDRA_FULL_ERROR=1 to see chained exception." (facebookresearch/hydra; diagC30): a step, where "failed to set up ..." is none
COMMA_SET = re.compile(r"set (?:the )?(?:env(?:ironment)? var(?:iable)? )?[A-Z][A-Z0-9]*_[A-Z0-9_]*=\S")
COMMA_BEFORE = re.compile(r",\s+$")
LINK_AFTER = re.compile(r"\s*(?:the )?(?:docs? |documentation )?(?:at |on |in )?<?https?://")
# "For more details, run: sky jobs logs ..." starts its advice as a sentence does
SENTENCE_START = re.compile(r"(?:^|[.!?;:]\s+|\(\s*|\n|\bfor (?:more |further )?(?:details|information|info)[,:]?\s+(?:please\s+)?)$", re.IGNORECASE)
# Not advice to the reader: a clause about something else ("a beta, which you can contact us about"),
# or a step of a shell command the message quotes ("bash -c '... ; export X=1 && apt-get ...'").
RELATIVE = re.compile(r"\b(?:which|that|who|whom|whose)\s+$", re.IGNORECASE)
IN_COMMAND = re.compile(r"(?:[;|&'\"]|&&)\s*$")
# Where the advice ends: the end of its sentence (not a dot inside a name, a version or a URL).
END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)[.!?](?=\s|$)|\s+\(?(?=Traceback\b)|$")
MAX = 300
# A warning as a program writes it: its level's word in capitals, a warning class ("UserWarning:"), glog's W line
WARNED = re.compile(r"(?-i:\bWARN(?:ING)?\b)|\b(?:[A-Z]\w*)?Warning:|\[W(?:ARN(?:ING)?)?\]|^W\d{4} ", re.IGNORECASE)
# A warning of what a later release changes, not of what this run met; a line that says the program went on past it
DEPRECATION = re.compile(r"deprecat|FutureWarning|will be removed|in a future (?:release|version)|no longer be", re.IGNORECASE)
WENT_ON = re.compile(r"\b(?:instead|falling back|falls? back|will retry|retrying|ignoring|skipping)\b", re.IGNORECASE)
# The limit a warning names: what the run has is not enough, not supported or did not load (not an error it foretells: "you
# may encounter an out-of-memory (OOM) error if ...", "This will be an error in PyTorch 0.5"); a line at error level names
# its failure too. The remedy comes after it (a line's first words name what it is about: gedit's "WARNING **: Set document
# metadata failed" tells nothing to set)
LIMITS = (r"not (?:be )?(?:able|supported|compatible|available|installed|found|enough|sufficient|enabled)|unsupported|incompatible"
          r"|cannot|can't|could not|couldn't|unable|lower than|older than|too (?:old|new|low|small)|at least|missing")
LIMIT = re.compile(rf"\b(?:{LIMITS})\b", re.IGNORECASE)
FAILED = re.compile(rf"\b(?:{LIMITS}|fail(?:ed|s|ure)?|errors?)\b", re.IGNORECASE)
# a sentence's end inside a quoted message ("... billing details.', 'type': ...")
QUOTE_END = re.compile(r"(?<=[.!?])['\"]")


@dataclass(frozen=True)
class Remedy:
    text: str  # the advice, as the message says it
    line: int  # the log line it is on


def remedy_in(lines: Iterable[tuple[int, str]]) -> Optional[Remedy]:
    """The first piece of advice in these (line number, text) lines of one message; a sentence
    that goes on over the next lines is read on with them."""
    held = [(n, t.strip()) for n, t in lines if t.strip()]
    for i, (number, text) in enumerate(held):
        found = advice(" ".join([text] + [t for _, t in held[i + 1 : i + 3]]), len(text))
        if found:
            return Remedy(found, number)
    return None


def line_remedy(text: str, after: Iterable[str], line: int, warning: bool) -> Optional[Remedy]:
    """The remedy one line states after the limit it names (`after`: the lines after it, read on while they are indented,
    as a logger wraps a long message); for a `warning`, never a deprecation notice. None where it states none, or says it
    went on past what it names (a fallback, a retry)."""
    limit = (LIMIT if warning else FAILED).search(text)
    if limit is None or WENT_ON.search(text) is not None or warning and (WARNED.search(text) is None or DEPRECATION.search(text) is not None):
        return None
    wrapped = list(itertools.takewhile(lambda t: t[:1].isspace() and t.strip(), after))
    said = text[limit.start() :].strip()
    found = QUOTE_END.split(advice(" ".join([said, *(t.strip() for t in wrapped)]), len(said)))[0]
    return Remedy(found, line) if found else None


def remedy_step(remedy: Remedy, said: str = "") -> str:
    """A fix's lead where the message states its remedy: that remedy, quoted, with its line (and `said`, the line's words,
    where the finding does not quote them itself)."""
    return f'the message itself says: "{remedy.text}" (line {remedy.line}{": " + said if said else ""}); '


def advice(text: str, first: int = -1) -> str:
    """The advice a message gives ('' when none): from its first word to its sentence's end;
    only advice that starts in text[:first] when `first` is given."""
    for m in ADVICE.finditer(text):
        if 0 <= first <= m.start():
            break
        head = m.group(0)
        before = text[: m.start()]
        if RELATIVE.search(before) or (head.lower().startswith("export") and IN_COMMAND.search(before)):
            continue
        if (BARE_VERB.match(head) and not SENTENCE_START.search(text[: m.start()]) and not LINK_AFTER.match(text, m.end())
                and not (COMMA_BEFORE.search(before) and COMMA_SET.match(text, m.start()))):
            continue  # "failed to set up ...", "cannot use ..." mid-sentence: not advice
        rest = text[m.start() :]
        end = END.search(rest, len(head))
        if text[: m.start()].rstrip().endswith("("):  # "(run with NCCL_DEBUG=INFO for details)"
            close = rest.find(")")
            end = END.search(rest[:close], len(head)) if close > 0 else end
        # (a run of spaces a paste left inside the sentence, mmtracking#138's "first and                 inference", is one space)
        said = " ".join(rest[: end.start() if end else len(rest)].strip(" ,;:").split())
        if BARE_VERB.match(head) and CONCRETE.search(said) is None:
            continue  # "See above." / "Check the log": names nothing to do
        if len(said.split()) < 2:
            continue
        return said[:MAX]
    return ""
