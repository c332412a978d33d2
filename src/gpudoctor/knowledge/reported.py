"""The errors a thread's own words report: its title, or a person's sentence that quotes the program's message.

A thread pasted as one text opens with its frame (the repository's line, the title, a post's byline), and the reporter's
sentences stand around the log. The failure is often in those words and not in the log, which is cut before it (issue 35):
the title "# ggml_init_cublas: no CUDA devices found, CUDA will be disabled" and the sentence "still reports
`ggml_cuda_init: no CUDA devices found, CUDA will be disabled`:" above a log of model metadata (ggml-org/llama.cpp#6184);
'If I use --nproc_per_node=4 or --nproc_per_node=8, I will get "negative dimensions are not allowed".' above launcher
banners (MIC-DKFZ/nnUNet#856); the title "# 报错：finetune_glm.py: error: unrecognized arguments: --deepspeed_config" above
the script's usage text (Oneflow-Inc/one-glm#25). Such a line is the reporter's copy of the program's message: it is matched
by the same rules as a log line (knowledge/story.py `Diagnosis.feed_reported`), and its finding says where it stands.

Read as reported, by the words' shape:
- in the title, less its tags ("[Bug]:", a label before a full-width colon): where a program's message opens (an exception's
  class, "error:", a program's or a function's name and a colon: `ggml_init_cublas: ...`, `finetune_glm.py: error: ...`), a
  failure said of an object the title quotes ("can't find the "deploy.py" in ...", "couldn't find such file or directory:
  '.../dict.txt'"), or a quoted span that states a failure;
- in a person's sentence (outside a code fence, not an indented or a code line), a quoted span (backticks, double quotes)
  that states a failure, reported by the sentence's own verb ("I get", "it gives this error:", "still reports", "we got an
  error:"), by a colon right before it, or by "occurs" after it.
- on the line after a person's sentence that introduces it ("but it reports the error", "I got this error:", "the log.err
  says:", "中间报了一个...这么一句话"): a line that stands alone there (a backticked line, a fence of one line, or a line with a
  blank line, a sentence or a post after it) is the message the sentence says the run printed, whatever its words
  (deepspeedai/DeepSpeed#3624: "`No slot 2 specificied on host work1`."; zai-org/ChatGLM3#919: "... The specified checkpoint
  ... has not been saved."). A block of several lines under such a sentence is the log itself, read line by line; a line
  that is a sentence of its own, an image or a heading is none (place "introduced": where no rule reads it, it is the
  failure's own line, unrecognised: knowledge/story.py `Diagnosis.feed_reported`).
Never evidence (no report, only a supposition or a question): a question ("Is this an OOM?"); a hedge in the clause before
the quote ("you might meet an error "CUDA out of memory"", swin-transformer's thread; "maybe", "possibly", "instead of", a
negation); a condition after it ('GPU reports "CUDA out of memory" if batch size is too large', Eli-YiLi/PMM#3). A title
that only names a crash by its label ("# CUDA out of memory during training") is the reporter's word, not the program's
message: knowledge/title_said.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Optional

from gpudoctor.knowledge.mentions import PERSON, PROSE, SUPPOSED, clause_before
from gpudoctor.knowledge.paste_parts import SENTENCES, PasteParts
from gpudoctor.knowledge.reruns import WholeLines
from gpudoctor.knowledge.said_hang import COMMAND, POST, PROGRAM
from gpudoctor.knowledge.title_said import TITLE, TITLE_LINES

LINES = 2000  # lines of the input read (a thread's paste is short)
KEPT = 6  # reports kept
SHOWN = 60  # characters of a report's words another line must hold to show them again
PERSON_LINE = 600  # characters: a longer line is a program's
# the thread's own frame: the corpus' source line, the repository's line, its labels (a post's byline: said_hang.POST); a code fence
HEADER = re.compile(r"^(?:# source: |\S+/\S+ \xb7 (?:issue|pull request|discussion) #|labels: )")
THREAD = re.compile(r"^\S+/\S+ \xb7 (?:issue|pull request|discussion) #")  # a thread's own header (a whole log has only "# source:")
FENCE = re.compile(r"^\s*(?:```|~~~)")
# a quoted span: backticks, double quotes, typographic quotes (single quotes stand in a sentence's words and in messages' own names)
SPAN = re.compile(r"`([^`\n]{6,}?)`|\"([^\"\n]{6,}?)\"|\u201c([^\u201d\n]{6,}?)\u201d")
# in a title, single quotes too: one that no word touches on its outer sides (not an apostrophe: "can't", "users'")
TITLE_SPAN = re.compile(SPAN.pattern + r"|(?<![\w'])'([^'\n]{8,}?)'(?![\w'])")
# words that state a failure: a quoted span without them is a command, a name or a setting
FAILS = re.compile(
    r"\b(?:errors?|fail(?:ed|s|ure)?|fatal|exception|abort(?:ed)?|killed|segmentation fault|core dumped|timed? ?out|refused|invalid"
    r"|illegal|not (?:found|allowed|supported|available|implemented|defined|recogni[sz]ed|initiali[sz]ed|enough|match\w*|compatible)"
    r"|no (?:such|module|CUDA|GPUs?|devices?|kernel|space|attribute)\b|cannot|can't|couldn't|could not|unable|undefined"
    r"|unrecogni[sz]ed|unexpected|mismatch|missing|denied|out of memory|(?:does|do)(?: not|n't) (?:exist|match|support)"
    r"|must (?:be|match|have)|expected\b|only supports?)"
    r"|\b[A-Z]\w*(?:Error|Exception)\b",
    re.IGNORECASE,
)
# a person's verb that reports what the run printed
REPORT = re.compile(
    r"\b(?:get|gets|got|getting|see|sees|saw|seeing|receive[sd]?|receiving|encounter(?:s|ed|ing)?|hit|hitting|meet|met|face[sd]?"
    r"|facing|run into|ran into|running into|report(?:s|ed|ing)?|show(?:s|ed|ing|n)?|throw(?:s|n|ing)?|threw|give[sn]?|gave|giving"
    r"|raise[sd]?|raising|return(?:s|ed|ing)?|say(?:s|ing)?|said|print(?:s|ed|ing)?|output(?:s|ted)?|complain(?:s|ed|ing)?"
    r"|tell(?:s|ing)?|told|(?:fail|crash|error|stop|end|exit)(?:s|ed|ing)? (?:out )?with)\b",
    re.IGNORECASE,
)
# after the quote: the sentence's verb comes after it ("the error "X" occurs")
REPORTED_AFTER = re.compile(r"\W{0,3}(?:\w+\s+){0,2}(?:occur\w*|appear\w*|happen\w*|(?:is|was) (?:raised|thrown|shown|printed|reported))\b",
                            re.IGNORECASE)
# a hedge or a negation in the clause before the quote (a supposition too: mentions.SUPPOSED): no report of this run
HEDGE = re.compile(
    r"\b(?:might|may|could|would|should|possible|likely|suppose|guess|assume|wonder|whether|unless|in case|e\.g\.|such as"
    r"|instead of|rather than|no longer|used to|never|not|cannot)\b|n't\b",
    re.IGNORECASE,
)
# after the quote: a condition that is not the reporter's own run ("... if batch size is too large")
CONDITION = re.compile(r"\W{0,3}(?:if|unless|in case|when(?:ever)? you)\b", re.IGNORECASE)
# a question whether it is that error, not a report of it ("Is this an OOM?"; "why do I get ...?" reports it)
ASKED = re.compile(r"^\W*(?:is|are|was|could|can|might|may|does|do|would|should|any(?:one|body)?)\b.*\?\W*$", re.IGNORECASE)
# a title's tags and its own label before a full-width colon ("[Bug]: ", "Bug: ", "报错："), a tag at its end
TAGS = re.compile(r"^(?:\s*\[[^\]]{1,40}\]\s*:?)+\s*|^\s*(?:bug|question|help|issue|problem)\s*:\s*|^[^\x00-\x7f]{1,12}\uff1a\s*"
                  r"|\s*\[[^\]]{1,40}\]\s*$", re.IGNORECASE)
# where a program's message opens in a title: an exception's class (after any other script's letters too: "启动失败RuntimeError:
# ..."), "error:" or "error 400:", a program's or a function's own prefix
MESSAGE_AT = re.compile(
    r"(?<![A-Za-z0-9_.])(?:[A-Za-z_]\w*\.)*[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b(?=\s*[:(\[]|\s*$)"
    r"|\b[\w.\-/]+\.(?:py|sh|cpp|cu|cc|c|lua|rs|go):\s*(?:\d+:\s*)?(?:error|fatal)\b"
    r"|(?<![\w.])(?:ERROR|FATAL|[Ee]rror|[Ff]atal)(?: \d{1,4})?\s*:\s*(?=\S)"
    r"|^(?:[a-z_]\w*_\w*|[\w\-]+\.(?:py|sh|lua)):\s+(?=\S)"
)
# before a bare "error:", the words that name whose error it is, when they are all the title has before it (not a person's
# words: "I get error: ...")
ERROR_WORD = re.compile(r"(?i:error|fatal)")
NAMED = re.compile(r"^(?!.*\b(?i:I|we|my|it|this|get|gets|got|getting|have|has|had|see|saw)\b)(?:[\w.\-]+ ){1,3}$")
# a failure said of an object the title quotes: the program's message names what it could not find or open
OBJECT = re.compile(
    r"(?:(?:can't|cannot|couldn't|could not|unable to|fail(?:s|ed)? to) (?:find|open|load|import|locate)\s+(?:the\s+)?['\"`]"
    r"|(?:no such file|not found|couldn't find|could not find|cannot find|can't find|does not exist|doesn't exist)[^'\"`]{0,40}:\s*['\"`])",
    re.IGNORECASE,
)
WORD = re.compile(r"[A-Za-z]{2,}")  # a word of a sentence
ANY_QUOTE = re.compile(r"\"[^\"\n]*\"|`[^`\n]*`")  # a quoted string of any length (a record's keys and values)
# a line of code or a program's, not a person's sentence: a program's prefix (`[rank0]:`, a reply's `>`, a table's `|`, a
# number), a statement's keyword, a call, an assignment, a prompt
CODE = re.compile(r"[\[>|]|\d|(?:raise|except|def|class|return|assert|if|elif|import|from|File|at|>>>|\$|#)\b|[\w.]+\(|[\w.\[\]]+\s*=[^=]")


# A sentence that introduces the error on the line after it: its end names an error or a message (or says the run said or
# printed something, before a colon); "如下" (as follows), "这么一句话" (such a line) in Chinese.
INTRO = re.compile(
    r"(?:\b(?:errors?|exceptions?|(?:error )?messages?|tracebacks?)|报错|错误|异常)\W{0,3}$"
    r"|\b(?:error|message) (?:is|was)\W{0,3}$"
    r"|(?:报错|报了|错误|异常)[^。！？]*$",  # (a Chinese sentence's last clause that says it reported: "...报了一个...这么一句话")
    re.IGNORECASE,
)
NO_ERROR = re.compile(r"\b(?:no|without|nor)\b", re.IGNORECASE)  # "... no Python traceback, or explicit crash message."
COLON_END = re.compile(r"[:\uff1a]\W{0,2}$")
INTRO_WORD = re.compile(r"\b(?:errors?|exceptions?|messages?)\b|报错|错误|异常", re.IGNORECASE)
# not a message: an image, a link alone, a heading or a list item, a table's row, a banner ("==== NVSMI LOG ===="), a
# command typed (a prompt's, a path run, a launch), a sentence to the reader (a question, a template's request, a line that
# introduces what follows), a line that says the program went on (a warning, "skipping", "retrying")
# A program's line that says what it is doing, as a run's output opens ("Starting server", "Loading checkpoint shards", "Using
# device: cuda"): with no word of failure (FAILS), it is the first line of the output a sentence introduces, not the error it
# says the run printed (heldout26 neuratech-ai/ComfyUI-MultiGPU#1: "I get this error ...:", then "Starting server", and the
# prompt's validation failure below it).
STATUS = re.compile(r"^\W{0,3}(?:Starting|Started|Running|Listening|Loading|Loaded|Using|Initiali[sz]ing|Connecting|Connected|Launching"
                    r"|Downloading|Saving|Building|Creating|Preparing|Processing|Setting up|Found|Got)\b")
NOT_A_MESSAGE = re.compile(
    r"^\s*(?:!?\[[^\]]*\]\(|<img\b|https?://\S+\s*$|#{1,6}\s|[-*+]\s|\d+[.)]\s|\||\$\s|\.{0,2}/\S+|\(\w+\)\s|\[[\w.-]+@)"
    r"|={4,}|-{4,}|[?\uff1f:\uff1a]\W{0,2}$"
    r"|^\W*(?:if|please|paste|here|see|note|any|anyone|anybody|someone|is|are|was|were|has|have|had|did|does|do|can|could|"
    r"would|should|will|what|where|which|how|why|thanks?|sorry)\b"
    r"|\b(?:warn\w*|instead|falling back|falls? back|will retry|retrying|ignoring|skipping)\b",
    re.IGNORECASE,
)
BLANKS = 2  # blank lines between the sentence and its message
CJK_SENTENCE = re.compile(r"[\u4e00-\u9fff]{4}")  # a person's Chinese words (a program's message under the sentence is English)
INTRODUCED = "introduced"

# where a report stands, in a finding's words
REPORTED_PLACE = {"title": "the thread's title", "sentence": "a sentence of the reporter's that quotes it",
                  INTRODUCED: "the line a sentence of the reporter's introduces as the error"}


@dataclass(frozen=True)
class ReportedError:
    """An error the paste's own words report: its line, where it stands ("title" or "sentence"), its words, and where the
    input shows them again."""

    line: int
    place: str
    text: str
    shown: int = 0  # another line of the input that holds these words (the log's own line of it), 0 when none


def words_of(text: str) -> str:
    """What another line must hold to show a report's words again: the message after its first prefix ("ggml_init_cublas: ",
    "Server returned error 400: ") where enough is left, its first SHOWN characters."""
    head, colon, rest = text.partition(": ")
    return (rest if colon and len(rest) >= SHOWN // 3 else text)[:SHOWN]


def hedged(clause: str) -> bool:
    """The words before a quote suppose, hedge or negate what it says."""
    return bool(HEDGE.search(clause) or SUPPOSED.search(clause))


def quoted(text: str, m: re.Match[str]) -> str:
    """A quoted span's words; a backticked message that holds backticks of its own (`ValueError: Only one of `max_epochs`
    or `max_iters` can be set.`) runs to the line's last backtick."""
    span = next(g for g in m.groups() if g)
    last = text.rfind("`")
    if text[m.start()] == "`" and MESSAGE_AT.match(span) and last >= m.end() and not text[last + 1 :].strip(" .,;:!)"):
        span = text[m.start() + 1 : text.rfind("`")]
    return span.strip(" `")


def title_reports(title: str) -> list[str]:
    """The program's message a thread's title ("# ...") quotes, if any (see the module's why)."""
    text = TAGS.sub("", title.lstrip("# ").strip())
    if not text or ASKED.search(text):
        return []
    out = [s for m in TITLE_SPAN.finditer(text) if FAILS.search(s := quoted(text, m)) and not hedged(clause_before(text, m.start()))]
    m, said = MESSAGE_AT.search(text), OBJECT.search(text)
    if m is not None and FAILS.search(text, m.start()) and not hedged(clause_before(text, m.start())):
        start = m.start()
        if ERROR_WORD.match(m.group(0)) and (named := NAMED.search(text, 0, start)) is not None:
            start = named.start()  # the words that name whose error it is ("CUDA driver error: invalid argument")
        out.append(text[start:].strip())
    elif said is not None and not hedged(clause_before(text, said.start())):
        out.append(text)
    return list(dict.fromkeys(out))


def sentence_reports(line: str, framed: bool = True) -> list[str]:
    """The program's messages a person's sentence quotes and reports (see the module's why). Outside a thread's frame
    (`framed` False: a log, not a thread) only a sentence in the first person or that opens as a person's does is one."""
    text = line.strip()
    if not text or len(text) > PERSON_LINE or line[:2] in ("  ", "\t") or CODE.match(text) or ASKED.search(text):
        return []
    if not framed and not (PERSON.search(text) or PROSE.search(text)):
        return []
    if len(WORD.findall(ANY_QUOTE.sub(" ", text))) < 3:
        return []  # no sentence around the quotes: a record's fields ('"msg":"failed to allocate device"'), a list of names
    out = []
    for m in SPAN.finditer(text):
        span = quoted(text, m)
        if not FAILS.search(span):
            continue
        before, after = clause_before(text, m.start()), text[m.end() : m.end() + 80]
        if not (REPORT.search(before) or before.rstrip(" `").endswith(":") or REPORTED_AFTER.match(after)):
            continue
        if hedged(before) or CONDITION.match(after):
            continue
        out.append(span)
    return out


def introduces(line: str, framed: bool = True) -> bool:
    """The line is a person's sentence that introduces the error on the line after it (see the module's why)."""
    text = line.strip()
    if not text or len(text) > PERSON_LINE or line[:2] in ("  ", "\t") or CODE.match(text) or ASKED.search(text):
        return False
    if not framed:
        return False  # a thread's sentence: a log's own lines are read as they are
    clause = clause_before(text.rstrip(" .:\uff1a"), len(text.rstrip(" .:\uff1a")))
    if hedged(clause) or NO_ERROR.search(clause) or INTRO.search(text) is None and not (COLON_END.search(text) and INTRO_WORD.search(clause)):
        return False
    return len(WORD.findall(text)) >= 2 or bool(CJK_SENTENCE.search(text))


# Before a command typed: a Markdown quote's marks, a notebook's shell escape, an environment's name, a shell's prompt
# ("> python3 -m paddle.distributed.launch ...", "!python train.py", "(py310) user@host:~/x$ torchrun ...", "C:\\x> python ...")
PROMPT = re.compile(r"^(?:>\s?)*\s*(?:!|%run\s+|\(\S+\)\s*)?(?:[\w.-]+@[\w.-]+:\S*\s*[$#]\s*|[A-Za-z]:\\[^>\n]*>\s*)?")


def typed(text: str) -> bool:
    """The line is a command the person typed (a launch), whatever quote or prompt stands before it: what they ran, never
    the message the run printed (issue 35, diagB30: PaddlePaddle/PaddleOCR#14195's "具体报错命令：" (the command that errs)
    above a quoted "> python3 -m paddle.distributed.launch ...")."""
    rest = text[PROMPT.match(text).end():]  # type: ignore[union-attr]  # (PROMPT matches the empty string)
    return COMMAND.match(rest.strip("`\"\u201c\u201d ")) is not None


def message_alone(line: str) -> str:
    """The message a line holds when it can be one standing alone under a sentence (its backticks and quotes peeled), else ''."""
    text = line.strip()
    if typed(text):
        return ""
    if not text or FENCE.match(text) or NOT_A_MESSAGE.search(text) or POST.match(text) or HEADER.match(text) or COMMAND.match(text):
        return ""
    if STATUS.match(text) and not FAILS.search(text):
        return ""  # the program saying what it does (its output's first line): the error the sentence introduces is further down
    inner = text.rstrip(" .,;").strip("`\"\u201c\u201d").strip()
    if not inner or NOT_A_MESSAGE.search(inner) or CJK_SENTENCE.search(inner) or (PERSON.search(inner) and not text.startswith(("`", '"'))):
        return ""  # a person's next sentence, not the program's line
    return inner if len(WORD.findall(inner)) >= 2 else ""


def stands_after(line: str) -> bool:
    """The line after a message shows it stood alone: a blank line, a person's sentence or a post's byline."""
    text = line.strip()
    if not text or FENCE.match(text) is not None or POST.match(text) is not None:
        return True
    if PROGRAM.search(text):
        return False  # the program's next line (a logger's stamp or level, "I tensorflow/..."): the message is a block's
    return bool(PERSON.search(text) or PROSE.search(text) or CJK_SENTENCE.search(text))


class Reported(WholeLines):
    """The errors a thread's title and its people's sentences report, read from a stream fed block by block (`feed`,
    `tee`): its first LINES lines, at most KEPT reports."""

    def __init__(self) -> None:
        super().__init__()
        self.reports: list[ReportedError] = []
        self.fenced = False
        self.framed = False  # a thread's header line was read (its repository's line)
        self.titled = False
        self.texts: list[tuple[int, str]] = []  # the lines read, for where a report's words stand again (`end`)
        # the paste's parts (knowledge/paste_parts.py): a thread's own frame was read (its header, a post's byline), the lines
        # of the reporter's words in it (the title, people's sentences), the title, and the output's last non-blank line
        self.thread = False
        self.words: set[int] = set()
        self.title: tuple[int, str] | None = None
        self.last_own = 0
        self.sentences: list[tuple[int, str]] = []
        # a sentence that introduces the error on the line after it: (its line, blank lines since, in a fence since), and the
        # line that may be that error, waiting for the line after it to show it stands alone
        self.intro: Optional[tuple[int, int, bool]] = None
        self.candidate: Optional[tuple[int, str, bool]] = None

    def read(self, block: bytes, begin: int, end: int) -> None:
        at = begin
        while at < end and self.lines < LINES:
            nl = block.find(b"\n", at, end)
            nl = end if nl == -1 else nl
            self.lines += 1
            if nl - at <= 4 * PERSON_LINE:
                text = block[at:nl].decode("utf-8", "replace").rstrip("\r")
                if self.line(self.lines, text):
                    self.texts.append((self.lines, text))
                    if text.strip():
                        self.last_own = self.lines
                elif self.thread and text.strip() and not (FENCE.match(text) or POST.match(text) or HEADER.match(text)):
                    self.words.add(self.lines)
                    if len(self.sentences) < SENTENCES and (self.title is None or self.title[0] != self.lines):
                        self.sentences.append((self.lines, text.strip()[:PERSON_LINE]))
            else:
                self.last_own = self.lines  # (a line this long is a program's)
            at = nl + 1
        if at < end:
            self.lines += block.count(b"\n", at, end)

    def end(self) -> None:
        """The input ended: each report is told where another line holds its words (the log's own line of the message)."""
        super().end()
        if self.candidate is not None and not self.candidate[2]:
            self.keep(ReportedError(self.candidate[0], INTRODUCED, self.candidate[1]))
        self.candidate = self.intro = None
        self.reports = [replace(r, shown=next((n for n, text in self.texts if words_of(r.text) in text), 0)) for r in self.reports]
        self.texts = []

    def parts(self) -> PasteParts:
        """The paste's parts as read: none outside a thread's frame; no output's end where the input goes on past LINES."""
        if not self.thread:
            return PasteParts()
        return PasteParts(frozenset(self.words), self.title, self.last_own if self.lines <= LINES else 0, tuple(self.sentences))
    def keep(self, report: ReportedError) -> None:
        if len(self.reports) < KEPT:
            self.reports.append(report)

    def introduced(self, number: int, text: str) -> None:
        """The message a sentence introduces on the line after it (see the module's why), read before the line itself."""
        if self.candidate is not None:
            line, said, fenced = self.candidate
            self.candidate = None
            if (FENCE.match(text) is not None) if fenced else stands_after(text):
                self.keep(ReportedError(line, INTRODUCED, said))
            return
        if self.intro is None:
            return
        at, blanks, fenced = self.intro
        self.intro = None
        if not text.strip():
            if blanks < BLANKS and not fenced:
                self.intro = (at, blanks + 1, fenced)
            return
        if FENCE.match(text):
            if not fenced:
                self.intro = (at, blanks, True)
            return
        said = message_alone(text)
        if said:
            self.candidate = (number, said, fenced)

    def line(self, number: int, text: str) -> bool:
        """Reads a line; whether it may be the log's own (not the thread's frame, not a person's sentence)."""
        self.introduced(number, text)
        if FENCE.match(text):
            self.fenced = not self.fenced
            return False
        if self.fenced:
            return True
        if POST.match(text) or HEADER.match(text):
            self.framed = self.framed or HEADER.match(text) is not None  # a thread's frame: its title follows
            self.thread = self.thread or POST.match(text) is not None or THREAD.match(text) is not None
            return False
        if self.framed and not self.titled and number <= TITLE_LINES and TITLE.match(text):
            self.titled = True
            self.title = (number, text.strip()[:300])
            found, place = title_reports(text), "title"
        else:
            found, place = sentence_reports(text, self.framed), "sentence"
        for words in found[: max(0, KEPT - len(self.reports))]:
            self.reports.append(ReportedError(number, place, words))
        if place == "sentence" and not found and introduces(text, self.framed):
            self.intro = (number, 0, False)
        return not (found or place == "title" or PERSON.search(text) or PROSE.search(text))
