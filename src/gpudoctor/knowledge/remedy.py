"""What an error message already says to do.

Many messages state their own remedy ("try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
"Please set `find_unused_parameters=True`", "consider passing CUDA_LAUNCH_BLOCKING=1",
"see https://…", "export NCCL_P2P_DISABLE=1"). For a failure no pattern knows, that sentence,
quoted with its line, is a better fix than any generic advice. Only the failure's own message and
the lines that continue it are read, never the rest of the log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Optional

# The start of a sentence that tells the reader what to do.
ADVICE = re.compile(
    r"(?<![\w-])(?:"
    r"you (?:can|could|may|might|should|must|need to|will need to|have to|may want to|might want to) (?:also |either |now )?\w+|"
    r"please (?!note\b|be aware\b|wait\b|understand\b|be patient\b|stand by\b|hold on\b|ignore\b)\w+|"
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
        if BARE_VERB.match(head) and not SENTENCE_START.search(text[: m.start()]) and not LINK_AFTER.match(text, m.end()):
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
