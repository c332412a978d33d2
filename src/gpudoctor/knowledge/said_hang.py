"""A person's sentence beside a paste that says this run hangs now, and the log lines around it that show where it stopped.

A log that ends at set-up or mid-progress is a hang or a cut paste: the log alone cannot tell them apart
(`log-inconclusive`). The reporter's words can: "the training gets stuck during the first interation. I have the following
logging information and it does not change" (facebookresearch/maskrcnn-benchmark#58), "the GPUs were stuck - utility 100%,
memory occupied, seems like working - but nothing is done" (#208), "And the program stuck.... and only shows these:"
(hpcaitech/ColossalAI#158), "DDP do not allocate GPU and freezes" (ultralytics/ultralytics#2927), an issue's title
"# Training stuck on: "initializing ddp: GLOBAL_RANK"" (zju3dv/LoFTR#278).

Keyed on a statement that the run hangs: a hang word (stuck, hangs, hung, freezes, "no progress", "nothing happens", "waits
forever", "does not move", "no log information after downloading the data") in a person's line (mentions.py `PROSE`/`PERSON`, or a thread's title), said of the run. Not a
statement of it:
- a question ("does it hang?", mentions.py `ASKED`);
- a negation or a hypothetical ("it does not hang", "no longer stuck", "if it hangs", "this can cause the process to
  hang": NOT_NOW before the word);
- the past, resolved ("it used to hang until I set ...", "it did not hang on since then", "after I set X it no longer
  hangs": RESOLVED anywhere on the line);
- a program's own line (a logger's prefix, NCCL's, a warning: "this can cause the process to hang", "Hang tight while
  ...", a config's `freeze_layers`), and what is not a run at all ("stuck at a very high loss": a metric).

`SaidHang` reads the input's first LINES lines as `said_fixed.SaidFixed` does, keeps the first such sentence with its line
number, and the program's lines (not a person's, not a thread's frame, not a command typed) after it in the same post, to
the paste's end (a later post's paste is another run's; the last AROUND are kept; none when the paste goes on past the
LINES read: its last line read is no place the run stopped), or the AROUND before it when none follows: hang/stage.py
reads where the run stopped from the last of them. Among those lines, the first that marks an
inference server's log (knowledge/serving.py) is kept too: a server's hang gets the server's words.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Optional

from gpudoctor.knowledge.mentions import ASKED, PERSON, PROSE
from gpudoctor.knowledge.reruns import WholeLines
from gpudoctor.knowledge.serving import SERVER

# The hang words, said of a run (a subject before it is not required: titles and fragments leave it out).
HANG = re.compile(
    r"\b(?:(?:get|gets|got|getting|is|was|are|were|be|been|keeps?|stays?|remains?|always|still|seems?(?: to be)?|just|will)\s+)?"
    r"(?:stuck|hangs?|hanging|hung|stall(?:s|ed|ing))\b"
    # freezing said of the run, not of a model's layers ("Epoch 1: Freezing ResNet18 backbones...", "weight: Frozen"): no
    # object after it
    r"|\b(?:freez(?:es|ing|e)|froze)(?=\s*(?:$|[.,!:;)(]|(?:at|on|in|after|when|while|during|and|with|forever|up|completely|again|there|here)\b))"
    r"|\b(?:is|are|was|were|got|gets|get|be|been|seems?) frozen\b"
    r"|\bno (?:more )?progress\b|\bnothing (?:happens|happened|is done|more happens)\b|\bwait(?:s|ing)? forever\b"
    # (and "it will not continue<Using ... extensions root...>": a title that names the pasted point it stops at, lucidrains/DALLE-pytorch#172)
    r"|\b(?:does not|doesn't|did not|didn't|never|will not|won't) (?:move|proceed|continue)(?=\s*(?:[.,!:;<]|$|on\b|forward|at all|any ?further|past|beyond|after))"
    r"|\bno more output\b"
    # nothing printed past a point: "there is no log information after downloading the data" (kubeflow/trainer#1601)
    r"|\bno (?:more |further |new )?(?:training )?(?:logs?(?: information| output)?|output) (?:after|since|beyond|past)\b",
    re.IGNORECASE,
)
HANG_WORDS = re.compile(rb"stuck|hang|hung|freez|froze|stall|progress|nothing|forever|move|proceed|continue|no more output|no (?:more |further |new )?(?:training )?(?:log|output)", re.IGNORECASE)
# Right before the word: a negation ("does not seem to hang", "no longer stuck"), a hypothetical ("if the training gets
# stuck", "this can cause the process to hang"), a request ("please debug the hang"): not this run now.
NOT_NOW = re.compile(
    r"(?:\b(?:not|never|no longer|without)|n't)\s+(?:\w+\s+){0,2}$"
    r"|\b(?:if|whether|unless|in case)\b[^.!?;,]{0,40}$"
    r"|\b(?:may|might|could|would|can|cause|causes|prevent|avoid)\s+(?:\w+\s+){0,3}$|\b(?:the|a|debug)\s+$",
    re.IGNORECASE,
)
# Anywhere on the line: the hang is the past, resolved; or a metric, not a run, is what is stuck.
RESOLVED = re.compile(
    r"\b(?:used to|until I|until we|since then|(?:is|was|got|been) (?:fixed|solved|resolved)|no longer|not anymore|any ?more)\b"
    r"|\bstuck (?:at|on|in) (?:a |the )?(?:very )?(?:high|low|same|constant|\d[\d.]*) ?(?:loss|accuracy|acc|value|lr|%)"
    r"|\b(?:loss|accuracy|metric|reward)\b[^.!?]{0,30}\bstuck\b"
    # a count stuck at zero, not a run at a point (NVIDIA/k8s-device-plugin#58: "allocatable stuck at zero", the node's
    # nvidia.com/gpu count); "stuck at 0%", "at 0/100", "at 0 it" are a run's progress where it stopped
    r"|\bstuck (?:at|on) (?:zero\b|0(?![\d.%/]|\s*(?:%|/|its?\b|steps?\b|epochs?\b|iter)))"
    # the person is stuck, not the run ("I end up with the same error message and I'm stuck", "I got stuck with this error":
    # heldout17's cryodrgn#467 and gnn-dep-parsing#7, read in the transfer check)
    r"|\b(?:I|we)(?:'m|'re| am| are| was| were| got| get| have been|'ve been)? stuck\b(?!\s+(?:at|in|on|after|during|when|while|for)\b)"
    r"|\bstuck (?:with|on) (?:this|that|the|an?|same|the same) (?:\w+ )?(?:error|problem|issue|exception|bug)s?\b"
    # a hang before this run ("a previous session that had hung"), a model's layers frozen on purpose ("Freezing TorchScript model")
    r"|\bhad (?:hung|been stuck|frozen|stalled)\b"
    r"|\bfr(?:eez\w*|ozen?) (?:the |a |all |its )?(?:\w+ )?(?:models?|layers?|weights|backbones?|param\w*|encoders?|decoders?|bn|batch ?norm|TorchScript|vision|llm)\b",
    re.IGNORECASE,
)
# A program's line, not a person's: a logger's or a library's prefix, a key=value dump, a warning, NCCL's own lines (its level or
# version after its name: a person's sentence names NCCL too, "the trainer will get stuck after NCCL initialization", heldout26b
# Jiayi-Pan/TinyZero#100).
PROGRAM = re.compile(
    r"^\s*(?:\[|\(|\d{2,4}[-/:]|[\w.]+:\d+\]|[A-Z]{3,}\b|\w+\s*[=:]\s*\S+,|.*\b\w+=\S+, \w+=)"
    r"|\b(?:\w*Warning|[Ww]arn(?:ing)?:|WARN|NCCL (?:INFO|WARN|ERROR|DEBUG|TRACE|version|error|warn)|ProcessGroup\w*|[Ww]atchdog)|\[NCCL|\b(?i:hang tight)\b|\b\w*_(?:stuck|hang|freeze)\w*|\b(?:stuck|hang|freeze)_\w+"
    r"|\\n|File \"",
)
TITLE = re.compile(r"^#\s+\S")  # a thread's title (the corpus' "# Problem with multi-GPU training")
# A thread's own frame around the pastes: its header lines, a post's byline ("robpal1990 · description · 2018-10-29"),
# a code fence: neither the program's lines nor a person's sentence.
FRAME = re.compile(r"^\s*(?:#|```|~~~|\S+ \xb7 (?:description|comment|issue #|pull request #|discussion #)|labels: |>|\*\s|-\s|\d+\.\s|$)")
POST = re.compile(r"^\S+ \xb7 (?:description|comment|answer|review)\b")  # a thread's post's byline
# A command the user typed (a launch), not what the run printed: "python train.py ...", "$ torchrun ...", "DATA=x python ..."
COMMAND = re.compile(r"^\s*(?:\$\s*)?(?:\w+=\S*\s+)*(?:python\d?(?:\.\d+)?|torchrun|deepspeed|accelerate|srun|mpirun|bash|sh|sbatch|CUDA_VISIBLE_DEVICES)\b")
STAMPED = re.compile(r"^\s*(?:\[|\d{2,4}[-/:]|[A-Z]{3,}\b)")  # a line a logger or a launcher stamped
# A program's line (what the run printed), told from a person's sentence: a logger's stamp or level, a key/value, a path,
# a progress counter, or no sentence shape (no first person, no sentence start).
PROGRAM_LINE = re.compile(
    r"^\s*(?:\[|\d|[A-Z_]{3,}\b|[\w.]+:\s|\w+ \w+:|[\w.]+\(|Using |Loading |Creating |Initiali[sz]|Start|Done|index|creating|loading)"
    r"|\b(?:INFO|DEBUG|WARNING|rank|Rank|GLOBAL_RANK|epoch|Epoch|iter|step|Step)\b|=|\|",
)
# A sentence that ends on "stuck on" (or at, in, with) and leaves what to the lines after it: "Right now I'm stuck on" above
# a quoted "nvcc fatal : A single input file is required ..." (NickDarvey/whisper#19, a build error: issue 35, diagB30) is a
# person blocked by the error that follows, not a run that hangs; above a run's line ("stuck on:" then "initializing ddp:
# GLOBAL_RANK: 0"), the run hangs there. The next line of text decides.
DANGLING = re.compile(r"\bstuck\s+(?:on|at|in|with)\s*(?:the following|this|these)?\s*[:.…]*\s*$", re.IGNORECASE)
# The line that follows it is an error's (the words of a compiler's, a tool's or Python's failure)
ERROR_NEXT = re.compile(r"\b(?:error|fatal|exception|traceback|failed|failure|cannot|can't|could not|unable to)\b|Error\b", re.IGNORECASE)
LINES = 2000  # lines of the input searched (a thread's paste is short)
AROUND = 40  # the program's last lines kept after the sentence, to its paste's end (or before it, when none follows)
PERSON_LINE = 600  # characters: a longer line is a program's
LONGEST = 4000  # bytes: a longer line is neither a sentence nor a line that shows a stage (a dump), and is not decoded


def says_it_hangs(text: str) -> Optional[str]:
    """The line (its first 300 characters), when it is a person's that says the run hangs now, else None (see the module's
    why): every hang word on it is read in its own clause, the first that says it decides."""
    return said_of_run(text, HANG)


def said_of_run(text: str, words: re.Pattern[str]) -> Optional[str]:
    """`says_it_hangs` for other words of what the run does now (`words`: knowledge/paste_parts.py's failure words): the
    line, when a person's clause says it of the run, not negated, supposed, asked or resolved."""
    line = text.strip()
    if not line or len(line) > PERSON_LINE or PROGRAM.search(line) or RESOLVED.search(line):
        return None
    if not (TITLE.match(line) or PROSE.search(line) or PERSON.search(line) or re.search(r"[.!:,]\s|\w[.!:]\s*$", line)):
        return None  # a person's sentence: a subject, a title, or punctuation as sentences have
    for m in words.finditer(line):
        if m.group(0)[0].isupper() and line[:m.start()].strip(" #*>") and line[:m.start()].rstrip()[-1:] not in ".!?:":
            continue  # a capital inside a sentence: a name ("Ho Sin Hang Engineering Building")
        start = max(line.rfind(".", 0, m.start()), line.rfind("?", 0, m.start()), line.rfind("!", 0, m.start())) + 1
        clause_end = min((i for i in (line.find(".", m.end()), line.find("?", m.end()), line.find("!", m.end())) if i >= 0), default=len(line))
        clause = line[start:clause_end + 1].strip()
        if NOT_NOW.search(line, start, m.start()) or clause.endswith("?") or ASKED.search(clause):
            continue
        return line[:300]
    return None


class SaidHang(WholeLines):
    """The first sentence in a stream, fed block by block (`feed`), that says the run hangs, and the lines around it."""

    def __init__(self) -> None:
        super().__init__()
        self.said: Optional[tuple[int, str]] = None  # (line, the sentence)
        self.dangling: Optional[tuple[int, str, int]] = None  # a sentence that ends "stuck on", until the next line of text decides
        self.before: deque[tuple[int, str]] = deque(maxlen=AROUND)  # the program's lines before the sentence
        # the program's last lines after it, in the same post, to the paste's end (its last line is where the run stopped)
        self.after: deque[tuple[int, str]] = deque(maxlen=AROUND)
        self.posts = 0  # a thread's posts begun so far (their bylines)
        self.said_post = 0
        self.server: Optional[tuple[int, str]] = None  # the first of these lines that marks an inference server's log
        self.unread = False  # the input goes on past the LINES lines read

    def read(self, block: bytes, begin: int, end: int) -> None:
        if self.lines >= LINES:
            self.unread = self.unread or end > begin
            return  # past what it reads: the lines after are not counted either (nothing reads their number)
        at = begin
        while at < end:
            nl = block.find(b"\n", at, end)
            nl = end if nl == -1 else nl
            self.lines += 1
            if self.lines > LINES:
                self.unread = True
                return
            if nl - at <= LONGEST:
                self.line(self.lines, block[at:nl].decode("utf-8", "replace"))  # (a longer line is a program's dump: not read)
            at = nl + 1

    def line(self, number: int, text: str) -> None:
        if self.dangling is not None:
            shown = text.strip().lstrip(">").strip().strip("`").strip()
            if not shown:
                return  # (blank lines, a fence, an empty quote line between the sentence and what it is stuck on)
            line, sentence, post = self.dangling
            self.dangling = None
            if ERROR_NEXT.search(shown) is None:
                self.said, self.said_post = (line, sentence), post  # stuck on a run's line: the run hangs there
        if self.said is None:
            said = says_it_hangs(text) if HANG_WORDS.search(text.encode("utf-8", "replace")) else None
            if said is not None:
                # (a thread's title stands before its first post's byline: the description is the title's post)
                post = self.posts + (1 if TITLE.match(text) and self.posts == 0 else 0)
                if DANGLING.search(said):
                    self.dangling = (number, said, post)  # the next line of text decides what it is stuck on
                else:
                    self.said, self.said_post = (number, said), post
                return
        if POST.search(text):
            self.posts += 1  # a thread's next post: its lines are another paste, not where this run stopped
            return
        if self.said is not None and self.posts > self.said_post:
            return
        if text.lstrip().startswith("`"):
            text = text.strip().strip("`")  # a log line inside an inline fence ("```[2018-05-28 05:14:54 @weights_viewer.py:60] ...```")
        if FRAME.match(text) or COMMAND.match(text) or says_it_hangs(text) is not None:
            return
        if (PROSE.search(text) or PERSON.search(text) or text.rstrip().endswith("?")) and not STAMPED.match(text):
            return  # a person's sentence
        if self.said is None and not PROGRAM_LINE.search(text):
            return  # before the sentence, a line of the program's own shape only (prose around a paste is long)
        if self.server is None and SERVER.search(text):
            self.server = (number, text.strip()[:300])
        (self.after if self.said is not None else self.before).append((number, text.strip()))

    def end(self) -> None:
        """The input ended: a sentence that ends "stuck on" with nothing after it is said of the run (nothing shows an error)."""
        super().end()
        if self.dangling is not None and self.said is None:
            line, sentence, post = self.dangling
            self.said, self.said_post = (line, sentence), post
        self.dangling = None

    def shown(self) -> list[tuple[int, str]]:
        """The program's lines that show where the run stopped: those after the sentence, else those before it; none when
        the sentence's paste goes on past the lines read (its last line read is no place the run stopped)."""
        if self.after and self.unread and self.posts == self.said_post:
            return []
        return list(self.after or self.before)
