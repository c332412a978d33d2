"""A person's sentence, right after an error they pasted, that says the error is not what ended the run: it is gone since
(fixed by a change they name, or not seen any more), or it did not stop the job.

Threads paste their history: an issue's title or an earlier paste quotes the error the reporter had first, then the text
says it is solved and goes on with the problem that is left (alncat/opusDSD#10: the title quotes a batch2 RuntimeError,
then "Now, I do not have that error anymore, so it worked! However, a new error happened."; brownvc/ganimorph#15: an
ImportError, then "If i install tensorpack==0.9.4 it works.", and the question is a hang on more than two GPUs); or the
reporter says an error printed early did not stop the job (openpathsampling/openpathsampling#857: a FileNotFoundError,
then "Though they don't seem to do kill the job.", and the job ends later on other errors). Such an error is history, not
the failure: its finding is kept as an information, and what comes after it decides (story.py `fixed_before`).

Not history: an error said gone when nothing after the sentence speaks of another problem (a thread's resolution: the
error was the run's failure, and the sentence is its fix, LiYingwei/EarthVQA#15's "This problem is solved: I modify the
--master_port ..."), and an error that ends a traceback the log shows, said gone after a fix (the run's own failure, pasted
as it printed it: cyanysc/video-super-resolution#7's IndexError, "the problem is solved! ... But other errors appeared", the
other errors not shown). History is an error quoted alone: in a title, or one line in prose.

`SaidFixed` reads the input's first lines as `reruns.Prompts` reads its WORKING sentences, and keeps such sentences with
their line numbers; `after(line)` is the first one within WINDOW lines after `line`. A question ("is that error gone?"),
a sentence that says the error came back or is still there, and a run that works only another way ("it works on one
GPU", "it works on the CPU") say none of this: the error stays the run's.

The same words stand before a paste too: the reporter says first that the errors they are about to show did not stop the
run, that it finished all the same (google/deepvariant#722: "When I run the GPU version, I got this error mesages, but it
still finished SNP calling and all the output files seemed fine.", then TensorFlow's CUDA_ERROR_NOT_INITIALIZED lines).
`before(line)` is such a sentence within WINDOW lines before an error: the error survived ("survived"), and what the log
shows decides the rest. Not this: a run that worked once and fails now ("it worked before, but now I get this error", "it
used to finish"), one that works only another way ("but it still runs on the CPU"), or one that does not finish ("but it
still doesn't finish", "but it never finishes").
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.knowledge.prefilter import newlines
from gpudoctor.knowledge.reruns import WholeLines

NOT = rb"(?:n'?t|n\xe2\x80\x99t| not)"  # don't, dont, don't (a typographic apostrophe), do not
# (up to two words between that name the error: "the lib missing issue", rembg#668's reporter of its title's library error)
THE_ERROR = rb"(?:that|this|the|those|these|th[ai]t? same)(?: [\w\-]+){0,2}? (?:error|issue|problem|exception|crash)s?"
# (what the sentence must not go on to say: the error is back, still there, or it is another setup that works)
# The error back is read on the whole line ("..., but then it came back again"); the error still there, or gone only in
# another setup, up to a "but" or "however" that turns to another problem: "it doesn't have the lib missing issue anymore,
# BUT it still use ONLY CPU" (rembg#668) says the error gone and a new problem, not the error still there.
UNLESS = (rb"(?![^\n]*\b(?:again|came back|comes back|reappear\w*|but not)\b)"
          rb"(?!(?:(?!\b(?:but|however)\b)[^\n])*?\b(?:still|only|except|on (?:the )?cpu|on (?:one|a single|1) gpu)\b)")
SAID = re.compile(
    rb"^[^\n]*?\b(?:(?P<gone>"
    # gone since: "I do not have that error anymore", "no longer get this error", "the error is gone / fixed now"
    rb"(?:do|did|does)" + NOT + rb" (?:have|get|see|hit|face|meet) " + THE_ERROR + rb" any ?more\b"
    rb"|no longer (?:have|get|see|hit|having|getting|seeing|hitting) " + THE_ERROR + rb"\b"
    rb"|" + THE_ERROR + rb" (?:is|are|was|were|has been|have been) (?:now )?(?:gone|fixed|solved|resolved)\b"
    # fixed by a change of a package: "If i install tensorpack==0.9.4 it works", "after upgrading e3nn it runs"
    rb"|(?:if|after|once|when) (?:i|we) (?:re-?)?(?:install(?:ed)?|upgrad(?:e|ed)|updat(?:e|ed)|downgrad(?:e|ed)|switch(?:ed)? to|pip install(?:ed)?) "
    rb"[^\n]{1,80}?\b(?:it|that|everything|this) (?:works|worked|runs|ran)\b"
    # survived: "they don't seem to do kill the job", "it does not stop the training"
    rb")|(?P<survived>(?:they|it|this|these|that|those)(?: errors?)? (?:do|does|did)" + NOT + rb" (?:seem to |appear to )?(?:do |actually |really )?"
    rb"(?:kill|stop|crash|end|abort|terminate|break|halt) (?:the |my |our )?(?:job|run|training|program|process|script|simulation)\b"
    rb"))" + UNLESS + rb"[^\n]*",
    re.IGNORECASE | re.MULTILINE,
)
# A sentence that says an error is gone is history only when the text goes on with another problem (alncat/opusDSD#10:
# "However, a new error happened."; brownvc/ganimorph#15: "But with multi-gpu ... it hangs"): a thread's resolution says
# the same words of the error that ended the run ("This problem is solved: I modify the --master_port ...",
# LiYingwei/EarthVQA#15, where the run's argparse refusal is the failure and the sentence its fix), and that error stays
# the run's. A sentence that says an error did not stop the job needs no other problem after it.
NEW_PROBLEM = re.compile(
    rb"\b(?:new|another|different|other|second) (?:error|issue|problem|exception|crash)|\bhowever\b|\bbut (?:now|with|when|then|it|i|the|on)\b"
    rb"|\bnow (?:i get|i got|it (?:hangs|fails|crashes|stops|gets stuck))|\b(?:hangs?|stuck|freezes)\b",
    re.IGNORECASE,
)
NEW_PROBLEM_LINES = 6  # lines after the sentence in which the other problem must be spoken of
# Before a paste: a sentence that names the errors (or warnings, messages) to come and says the run finished or worked all the
# same ("I got this error mesages, but it still finished SNP calling", "i got the following error. However, it didnt affect
# the execution of the simulation", mozilla-ai/federated-finetuning#4); the whole line must not say it worked once and fails
# now, or works only another way. The match ends with its sentence (a question after it is another sentence).
DESPITE = re.compile(
    rb"\b(?:but|though|although|yet|however)\b,? (?:[\w']+,? ){0,4}?(?:it|the (?:run|job|training|program|script|process|pipeline)|everything|training)\b "
    rb"(?:still |nonetheless |nevertheless |also |then )?(?:finish(?:ed|es)?|complete[sd]?|succeed(?:ed|s)?|work(?:s|ed)(?= fine| well| as)"
    rb"|r[au]ns? (?:fine|through|to (?:the )?end|successfully|normally)|seems to (?:finish|complete)"
    rb"|did" + NOT + rb" (?:affect|stop|interrupt|break) (?:the |my )?(?:execution|run|training|simulation|job|program|process|results?))\b[^\n?.!]*",
    re.IGNORECASE,
)
DESPITE_NAMES = re.compile(rb"\b(?:errors?|exceptions?|warnings?|messages?|tracebacks?)\b", re.IGNORECASE)  # in the 120 bytes before "but"
DESPITE_NAMED_BACK = 120
NOT_DESPITE = re.compile(  # anywhere on the line: it worked once, works another way, or does not finish
    rb"\b(?:before|used to|previously|earlier version|last (?:time|week|version)|now (?:it|i)|again|on (?:the )?cpu"
    rb"|on (?:one|a single|1) gpu|only|except|but not|not finish|never)\b",
    re.IGNORECASE,
)
PERSON_LINE = 1000  # bytes: a longer line is a program's, not a person's sentence
# After a paste, in a reply: the error can be ignored ("you can safely ignore this error", "the error is harmless", a
# maintainer's Korean "말씀하신 에러는 무시하고 진행하셔도 됩니다", you may ignore the error you mention and go on, with
# "training starts after a while", kimbring2/minecraft_ai#5; Chinese "这个错误可以忽略"). Said of an error, not of a warning
# beside it; not a sentence that goes on to the real problem ("..., the real error is above").
IGNORABLE = re.compile(
    rb"^(?=[^\n]{0,1000}$)[^\n]*?(?:\b(?:you |we )?(?:can|may|could) (?:safely |just )?ignore " + THE_ERROR.replace(b"issue|problem|", b"") + rb"\b"
    rb"|\b" + THE_ERROR.replace(b"issue|problem|", b"") + rb" (?:is|are) (?:harmless|benign|safe to ignore)\b"
    rb"|\b" + THE_ERROR.replace(b"issue|problem|", b"") + rb" (?:can|may) (?:safely )?be ignored\b"
    rb"|(?:\xec\x97\x90\xeb\x9f\xac|\xec\x98\xa4\xeb\xa5\x98)\S{0,3} \xeb\xac\xb4\xec\x8b\x9c\xed\x95\x98"  # 에러/오류(는) 무시하
    rb"|(?:\xe9\x94\x99\xe8\xaf\xaf|\xe6\x8a\xa5\xe9\x94\x99)\S{0,6}?\xe5\x8f\xaf\xe4\xbb\xa5\xe5\xbf\xbd\xe7\x95\xa5)"  # 错误/报错…可以忽略
    rb"(?![^\n]*\b(?:but|however|real|actual|the problem is)\b)[^\n]*",
    re.IGNORECASE | re.MULTILINE,
)
IGNORE_WORDS = re.compile(rb"ignor|harmless|benign|\xeb\xac\xb4\xec\x8b\x9c|\xe5\xbf\xbd\xe7\x95\xa5", re.IGNORECASE)  # (a block without any is not searched)
REPLY_WINDOW = 30  # lines after the error's last one in which a reply that says it can be ignored must stand (the next post)
LINES = 2000  # lines of the input searched (a thread's paste is short; a job's own log holds no such sentence)
KEPT = 8
WINDOW = 8  # lines after the error's last one in which the sentence must stand (the same post)


class SaidFixed(WholeLines):
    """The sentences in a stream, fed block by block (`feed`), that say an error before them was fixed or survived."""

    def __init__(self) -> None:
        super().__init__()
        self.said: list[tuple[int, str, str]] = []  # (line, the sentence, what it says: "gone" since or "survived")
        self.despite: list[tuple[int, str, str]] = []  # (line, the sentence before a paste that says the run finished despite it, "survived")
        self.ignorable: list[tuple[int, str, str]] = []  # (line, a reply's sentence that says the error can be ignored, "ignorable")

    def read(self, block: bytes, begin: int, end: int) -> None:
        """The whole lines block[begin:end]: only the input's first LINES lines are searched."""
        if self.lines < LINES:
            for m in (SAID.finditer(block, begin, line_end(block, begin, end, LINES - self.lines)) if len(self.said) < KEPT else ()):
                text = m.group(0).decode("utf-8", "replace").strip()
                if text.endswith("?"):
                    continue  # a question says nothing of the error
                if m.group("gone") and NEW_PROBLEM.search(block, m.start(), line_end(block, m.end() + 1, end, NEW_PROBLEM_LINES)) is None:
                    continue  # a resolution: the error it solved stays the run's failure
                self.said.append((self.lines + block.count(b"\n", begin, m.start()) + 1, text[:200], "gone" if m.group("gone") else "survived"))
                if len(self.said) >= KEPT:
                    break
            stop = line_end(block, begin, end, LINES - self.lines)
            read = -1  # the start of the last line looked at (one sentence a line)
            for m in DESPITE.finditer(block, begin, stop):
                start = block.rfind(b"\n", begin, m.start()) + 1
                last = block.find(b"\n", m.end(), stop)
                last = stop if last == -1 else last
                if start == read or len(self.despite) >= KEPT:
                    continue
                read = start
                if (last - start > PERSON_LINE or block[m.end():m.end() + 1] == b"?"  # (a question says nothing of the error)
                        or DESPITE_NAMES.search(block, max(start, m.start() - DESPITE_NAMED_BACK), m.start()) is None
                        or NOT_DESPITE.search(block, start, last) is not None):
                    continue
                text = block[start:m.end()].decode("utf-8", "replace").strip()
                self.despite.append((self.lines + block.count(b"\n", begin, start) + 1, text[:200], "survived"))
            for m in (IGNORABLE.finditer(block, begin, stop) if IGNORE_WORDS.search(block, begin, stop) is not None else ()):
                text = m.group(0).decode("utf-8", "replace").strip()
                if text.endswith("?") or len(self.ignorable) >= KEPT:
                    continue  # a question says nothing of the error
                self.ignorable.append((self.lines + block.count(b"\n", begin, m.start()) + 1, text[:200], "ignorable"))
        self.lines += newlines(block, begin, end)

    def before(self, line: int) -> Optional[tuple[int, str, str]]:
        """(line, sentence, "survived") of the last sentence within WINDOW lines before `line` that says the run finished
        despite the errors after it (DESPITE), or None."""
        return next((s for s in reversed(self.despite) if line - WINDOW <= s[0] < line), None)

    def after(self, line: int, window: int = WINDOW) -> Optional[tuple[int, str, str]]:
        """(line, sentence, "gone" or "survived") of the first such sentence within `window` lines after `line` (WINDOW: the
        same post; an error the thread's title quotes is said gone anywhere in the paste's first lines read, LINES), else
        (line, sentence, "ignorable") of a reply within REPLY_WINDOW lines that says the error can be ignored, or None."""
        return next((s for s in self.said if line < s[0] <= line + window), None) or next(
            (s for s in self.ignorable if line < s[0] <= line + REPLY_WINDOW), None)


def line_end(block: bytes, begin: int, end: int, lines: int) -> int:
    """Where the `lines` whole lines of block[begin:end] from `begin` end (`end` when it holds fewer)."""
    at = begin
    for _ in range(lines):
        nl = block.find(b"\n", at, end)
        if nl == -1:
            return end
        at = nl + 1
    return at
