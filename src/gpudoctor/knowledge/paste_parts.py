"""Pure: a thread's paste in its two parts — the reporter's words and the output — and what the output shows of a run.

A thread pasted as one text holds the reporter's words (its title, people's sentences: knowledge/reported.py tells them
from the rest as it reads) and the output (a run's or a tool's lines). The answer must take its evidence from the right
part (issue 35). The words say what failed somewhere; the output is what ran here, and it is often another run: a
commenter's working setup, a comparison machine, a run that completed while the machine hung. So, of the output:
- it **shows a failure** where any error the rules read, or a line logged at error level, stands in it: the words' error
  is then told beside it as ever;
- it **shows a run that worked** (`Worked`) where its own end is its last line (knowledge/ending.py: nccl-tests' average bus
  bandwidth, a test that PASSED, a finished training; NVIDIA/nccl-tests#44's run for a "System hangs" title), a pasted
  p2pBandwidthLatencyTest shows peer copies flowing (commands/diagnose/p2p_matrix.py; tinygrad/open-gpu-kernel-modules#44:
  a 4090 pair's run under a 5090's cudaErrorMapBufferObjectFailed title), or the framework's own answer lists a GPU where
  the words' error is that none is seen (knowledge/gpus_unused.py; microsoft/WSL#9272: a commenter's TensorFlow lists
  GPU:0 under "CUDA_ERROR_NO_DEVICE"). A GPU table or an environment dump beside the words is no run that worked: it is
  consistent with most failures (an out-of-memory's title above an nvidia-smi taken before the run, RLinf/RLinf#255);
- otherwise it **shows no run** the words could be checked against (cut, empty, only set-up or an environment dump), and
  an error that stands on the words alone stays the answer.
What the verdict does with it is decided in one place (knowledge/story.py `not_shown`, commands/diagnose/analyse.py
`no_failure`, log-inconclusive case `not-shown`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Optional

from gpudoctor.knowledge.said_hang import said_of_run

# The errors that say the process sees no GPU (CUDA found none, could not count or initialise them, a framework or NCCL
# found none): a framework's own answer that lists one contradicts them
DEVICE_NOT_SEEN = frozenset({"cuda-no-gpus-visible", "cuda-device-count-failed", "cuda-init-unknown-error", "cuda-init-warning-driver-too-old",
                             "nccl-no-gpu", "tensorflow-gpu-not-visible", "program-found-no-gpu", "gpu-monitor-no-gpu"})
# What shows that a run or a listing worked, in the finding's words
WORKED_HOW = {
    "ended": "its run's own end is the output's last line",
    "completed": "the output shows its run's own end",
    "p2p": "a pasted P2P test shows peer copies flowing",
    "gpu-seen": "the framework's own answer lists a GPU",
}
# A person's words that the run fails now, in its common phrasings ("the training crashes after two epochs", "it fails with
# 8 GPUs", "I get an error when ...", "it doesn't work on the 5090"), read clause by clause as a hang sentence is
# (knowledge/said_hang.py `said_of_run`: not negated, supposed, asked or resolved)
FAILS_NOW = re.compile(
    r"\b(?:crash(?:es|ed|ing)?|fails?|failed|failing|segfaults?|errors? out|(?:throws?|threw|raises?|gives?|gave|returns?) an? (?:error|exception)"
    r"|(?:get|gets|got|getting|see|saw|receive[sd]?|hit|hitting|encounter(?:ed)?) (?:an? |the |this |that |these |following )?(?:errors?|exceptions?|segfault)"
    r"|gets? killed|was killed|runs? out of memory|ran out of memory"
    r"|(?:does not|doesn't|did not|didn't|won't|will not|cannot|can't) (?:work|start|run|finish|complete|train)|stops? (?:working|responding))\b",
    re.IGNORECASE,
)
SENTENCES = 200  # the reporter's sentences kept (a thread's words are short)
WORDS_PLACE = {"title": "the thread's title", "sentence": "a sentence of the reporter's"}


@dataclass(frozen=True)
class Worked:
    """What in the output shows a run or a listing that worked: how (WORKED_HOW), and its line (0 for a reading)."""

    how: str
    line: int
    text: str

    def show(self) -> str:
        return f"line {self.line}: {self.text}" if self.line else self.text


@dataclass(frozen=True)
class Said:
    """The reporter's words that report a failure: where they stand (WORDS_PLACE), their line, their text, and whether
    they say the run (or the machine) hangs."""

    place: str
    line: int
    text: str
    hang: bool = False

    def show(self) -> str:
        return f"line {self.line}, {WORDS_PLACE[self.place]}: {self.text[:200]}"


@dataclass(frozen=True)
class PasteParts:
    """A paste's parts: the lines of the reporter's words (a thread's title and people's sentences; none outside a
    thread's frame), the thread's title, and the output's last line (0 when the paste was not read to its end)."""

    words: frozenset[int] = frozenset()
    title: Optional[tuple[int, str]] = None
    last_output: int = 0
    sentences: tuple[tuple[int, str], ...] = ()  # the first SENTENCES lines of the words but the title, with their text

    def words_only(self, lines: Iterable[int]) -> bool:
        """Every one of these lines is the reporter's words (none of them is the output's)."""
        lines = list(lines)
        return bool(self.words) and bool(lines) and all(n in self.words for n in lines)

    def worked(self, ended: tuple[int, str], p2p: str, gpu_answer: Optional[tuple[int, str, bool]]) -> tuple[Worked, ...]:
        """What in the output shows a run or a listing that worked (see the module's why): the run's end (line, text) where it
        is the output's last line, the P2P test's reading ('' when none, or one that shows a fault), the framework's latest
        answer whether it sees a GPU."""
        if not self.words:
            return ()  # (no thread's words: the whole input is the output, and the usual answer holds)
        out = []
        line, text = ended
        if text and line not in self.words and self.last_output and line >= self.last_output:
            out.append(Worked("ended", line, text[:200]))
        if p2p:
            out.append(Worked("p2p", 0, p2p))
        if gpu_answer is not None and gpu_answer[2] and gpu_answer[0] not in self.words:
            out.append(Worked("gpu-seen", gpu_answer[0], gpu_answer[1]))
        return tuple(out)

    def completed(self, ended: tuple[int, str]) -> Optional[Worked]:
        """The run's own end (line, text) where the output shows it (not a line of the words), wherever it stands in the
        output: beside words that report a failure, the paste is not called healthy on it."""
        line, text = ended
        return Worked("completed", line, text[:200]) if self.words and text and line not in self.words else None


def contradicting(worked: Iterable[Worked], finding_id: str) -> Optional[Worked]:
    """The first of what shows a run that worked that contradicts an error of this id: a run's end or a P2P test whatever
    the error; a GPU the framework lists only an error that none is seen (DEVICE_NOT_SEEN)."""
    return next((w for w in worked if w.how != "gpu-seen" or finding_id in DEVICE_NOT_SEEN), None)


def failure_said(parts: PasteParts, title_fails: bool, hang: Optional[tuple[int, str]],
                 reports: Iterable[tuple[int, str, str]]) -> Optional[Said]:
    """The first of the reporter's words that report a failure: a sentence or the title that says the run hangs
    (knowledge/said_hang.py), an error the title or a sentence quotes (knowledge/reported.py: (line, place, text)), the
    title's own words for a failure (knowledge/title_said.py `title_reports_failure`), a sentence that says the run fails
    now (FAILS_NOW); None when none does, or outside a thread's words."""
    if hang is not None and hang[0] in parts.words:
        return Said("title" if parts.title is not None and parts.title[0] == hang[0] else "sentence", hang[0], hang[1], hang=True)
    for line, place, text in reports:
        if line in parts.words:
            return Said(place, line, text)
    if title_fails and parts.title is not None:
        return Said("title", *parts.title)
    return next((Said("sentence", line, said) for line, text in parts.sentences if (said := said_of_run(text, FAILS_NOW)) is not None), None)
