"""Pure: a person's words beside a paste that say the run ran out of GPU memory, where the log's own lines do not show it.

A paste is often cut before its error, or is a GPU tool's table taken after it, and the reporter names the failure in their
own words: "I got OOM error when I run `./run.sh`" above a traceback cut at backward() (KellerJordan/modded-nanogpt#112),
"# 训练，3块显卡总显存90g不够用，显存爆了" above nvidia-smi's table (manycore-research/SpatialLM#103), "# CUDA out of memory during
training with A100 GPUs" above the model's summary (aqlaboratory/openfold#473), "> I find even with lora, the training script
run into OOM with 48 GB memory" (a reply quoting the reporter, LLaVA-VL/LLaVA-NeXT#203). The words name the family the log
alone does not; they do not show which allocation failed or what else held the GPU, so the answer built on them is a warning
with the out-of-memory fix, and the run's own line is what decides it (commands/diagnose/analyse.py `said_oom`).

Read as said, by the words' shape:
- the label: "OOM", "out of memory", "ran / runs / running out of (GPU, CUDA, VRAM, video) memory"; in Chinese, 显存 (GPU
  memory) with 不足 / 不够 / 爆 / 溢出 / 炸 / 超 (not enough, burst, overflow) after it in the same clause, or 爆显存;
- in a person's line: the thread's title, a sentence (mentions.py `PROSE` / `PERSON`), a line of Chinese, a reply's quote
  ("> ..."), outside a code fence; the reporter's (the title, or a post by the first post's author: another person's "I also
  got OOM" is another run).
Not a statement of it:
- a question ("# CUDA OOM?"), a negation, a way to avoid it or a hypothetical before the label in its clause ("without OOM",
  "to avoid OOM", "if it goes OOM", "不会爆显存", "避免爆显存", "能否");
- one said resolved ("# CUDA out of memory (resolved) and ...", "solved", "no longer", "已解决");
- host memory: the kernel's OOM killer, RAM, CPU or system memory, 内存 (another finding's: the host ran out, not a GPU);
- a program's own line (a logger's prefix or level: "INFO ... 10% for the buffer to avoid OOM"; a warning; torch's own
  "CUDA out of memory. Tried to allocate ...", which the patterns read as the run's line).
"""

from __future__ import annotations

import re
from typing import Optional

from gpudoctor.knowledge.mentions import ASKED, PERSON, PROSE
from gpudoctor.knowledge.reruns import WholeLines
from gpudoctor.knowledge.said_hang import POST
from gpudoctor.knowledge.title_said import TITLE, TITLE_LINES

LINES = 2000  # lines of the input read (a thread's paste is short)
PERSON_LINE = 600  # characters: a longer line is a program's
LABEL = re.compile(
    r"\bOOM(?:s|ed|ing)?\b(?![-_ ]?kill)"
    r"|\bout[ -]of[ -](?:(?:GPU|CUDA|VRAM|video|device)[ -])?memory\b"
    r"|\b(?:ran|run|runs|running) out of (?:the )?(?:(?:GPU|CUDA|VRAM|video|graphics|device) )?memory\b"
    r"|显存[^，。,.!?！？；;]{0,12}?(?:不足|不够|爆|溢出|炸|超)|爆(?:了)?显存",
    re.IGNORECASE,
)
# before the label in its clause: a negation, a way to avoid it, a hypothetical, a wish or a question word
NOT_SAID = re.compile(
    r"(?:\b(?:no|not|never|without|avoid\w*|prevent\w*|reduc\w*|fix\w*|solv\w*|overc[oa]me|if|whether|unless|may|might|"
    r"could|would|should|can|to save|instead of|rather than|how to|warn\w*|about|document\w*|mention\w*)\b|n't\b)[^.!?;]{0,40}$"
    r"|(?:不会|不|没有|没|避免|防止|减少|如何|怎么|能否|是否|会不会|如果|(?:肯定|一定|可能|也许|就|才|容易)会)[^，。！？；]{0,10}$",
    re.IGNORECASE,
)
RESOLVED = re.compile(r"\bresolved\b|\bsolved\b|\bovercame\b|\bno longer\b|\bnot anymore\b|已解决|解决了", re.IGNORECASE)
# host memory, not a GPU's: the kernel's OOM killer, RAM, CPU or system memory
HOST = re.compile(r"\b(?:RAM|CPU|host|system|swap)\b(?: \w+){0,2} (?:memory|OOM)|\bOOM[-_ ]?kill|\boom_kill|内存", re.IGNORECASE)
# a program's line: a logger's prefix or level, a warning, a record's fields, torch's own message
PROGRAM = re.compile(r"^\s*(?:\[|\(|\d{2,4}[-/:]|(?:INFO|DEBUG|WARN\w*|ERROR|CRITICAL|FATAL|TRACE)\b|[\w.]+:\d+)|\b\w*Warning\b|Tried to allocate")
FENCE = re.compile(r"^\s*(?:```|~~~)")
CJK = re.compile(r"[\u4e00-\u9fff]{2}")
CLAUSE_END = ".!?;,。！？；，"
SENTENCE_END = ".!?。！？"
# A number of GPUs a person's words put a run on: "using 1 GPU", "with 2 GPUs", "on a single GPU", "two cards" (another_run)
GPU_COUNT = re.compile(r"\b(?P<n>\d{1,2}|[Oo]ne|[Tt]wo|[Tt]hree|[Ff]our|[Ee]ight|(?:a )?single)(?:\s?x)?[ -]?(?:[A-Z]+\d+\w* )?(?i:GPU|card|卡)s?\b")
COUNT_WORDS = {"one": "1", "single": "1", "a single": "1", "two": "2", "three": "3", "four": "4", "eight": "8"}


def says_oom(line: int, text: str) -> Optional[str]:
    """The line (its first 300 characters) when it is a person's that says the run ran out of GPU memory, else None."""
    said = text.strip()
    title = line <= TITLE_LINES and TITLE.match(said) is not None
    said = said.lstrip("#> ").strip()
    if not said or len(said) > PERSON_LINE or PROGRAM.search(said) or RESOLVED.search(said) or HOST.search(said):
        return None
    if not (title or PROSE.search(said) or PERSON.search(said) or CJK.search(said)):
        return None
    for m in LABEL.finditer(said):
        start = max(said.rfind(c, 0, m.start()) for c in CLAUSE_END) + 1
        ends = [i for i in (said.find(c, m.end()) for c in CLAUSE_END) if i >= 0]
        clause = said[start : min(ends, default=len(said)) + 1]
        if NOT_SAID.search(said, start, m.start()) or clause.rstrip().endswith(("?", "？")) or ASKED.search(clause):
            continue
        if another_run(said, m.start()):
            continue
        return said[:300]
    return None


def another_run(said: str, at: int) -> bool:
    """The sentence that holds the label at `at` puts it on a run with one number of GPUs, and another sentence of the same
    line tells of a run with another number: the words tell two runs apart, and the out-of-memory is one of them, not
    necessarily the pasted one's (heldout26b Jiayi-Pan/TinyZero#100: "The trainer will be launched when only using 1 GPU, but
    later an OOM error will occur. When using 2 GPUs, the trainer will get stuck after NCCL initialization. Here is my log",
    above the 2-GPU torchrun's log that stops at NCCL's set-up)."""
    start = max(said.rfind(c, 0, at) for c in SENTENCE_END) + 1
    ends = [i for i in (said.find(c, at) for c in SENTENCE_END) if i >= 0]
    stop = min(ends, default=len(said))
    own = {gpu_count(m) for m in GPU_COUNT.finditer(said, start, stop)}
    others = {gpu_count(m) for m in GPU_COUNT.finditer(said[:start])} | {gpu_count(m) for m in GPU_COUNT.finditer(said, stop)}
    return len(own) == 1 and bool(others - own)


def gpu_count(m: re.Match[str]) -> str:
    """The number of GPUs a GPU_COUNT match names, as a word ('1', '2', ...)."""
    n = m.group("n").lower()
    return COUNT_WORDS.get(n, n)


class SaidOom(WholeLines):
    """The first line in a stream, fed block by block (`feed`), in which a person says the run ran out of GPU memory."""

    def __init__(self) -> None:
        super().__init__()
        self.said: Optional[tuple[int, str]] = None  # (line, the words)
        self.fenced = False
        self.reporter = ""  # the author of the thread's first post shown: the reporter (another's words are of another run)
        self.author = ""  # the author of the post being read

    def read(self, block: bytes, begin: int, end: int) -> None:
        at = begin
        while at < end and self.said is None and self.lines < LINES:
            nl = block.find(b"\n", at, end)
            nl = end if nl == -1 else nl
            self.lines += 1
            if nl - at <= 4 * PERSON_LINE:
                self.line(self.lines, block[at:nl].decode("utf-8", "replace"))
            at = nl + 1
        if at < end:
            self.lines += block.count(b"\n", at, end)

    def line(self, number: int, text: str) -> None:
        if FENCE.match(text):
            self.fenced = not self.fenced
            return
        if POST.match(text):
            self.author = text.split(" \u00b7 ", 1)[0].strip()
            self.reporter = self.reporter or self.author
            return
        if self.fenced or text[:2] in ("  ", "\t") or self.author != self.reporter:
            return
        said = says_oom(number, text)
        if said is not None:
            self.said = (number, said)
