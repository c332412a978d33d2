"""Pure: a thread's title that names a crash by its common label, in the reporter's words, not the program's message.

A pasted thread opens with its title ("# SDXL: CUDA out of memory", "# Segmentation fault (core dumped) training on 4
gpus", "# CUDA out of memory during training with A100 GPUs"). A title that quotes the program's message keeps what the
message says ("# RuntimeError: CUDA out of memory. Tried to allocate 58.00 MiB", "# ERROR:torch.distributed.elastic...
failed (exitcode: -9)"): the reporter copied it from the run. A title that only names the crash by its label (out of
memory, OOM, a segmentation fault), with none of the message's own words around it (an exception class, a logger's level,
a quotation, a size, a code, a pid), is the reporter's word for what they saw: where the log's own lines do not show it
(bmaltais/kohya_ss#1887: the paste shows accelerate launched with its defaults and the command's exit status 1, no out of
memory), the failure is read from the log, and the title is quoted beside the answer as what the reporter said
(knowledge/story.py `tell`, commands/diagnose/analyse.py).
"""

from __future__ import annotations

import re

TITLE_LINES = 5  # a thread's title stands in its first lines (the corpus' "# source:", the repository's line, the title)
TITLE = re.compile(r"^#\s+\S")
LABEL = re.compile(r"\b(?:CUDA )?out of memory\b|\bOOM\b|\bsegmentation fault\b|\bsegfault\b", re.IGNORECASE)
# The program's message, not a label: an exception's class, a logger's level or "error:", a quotation, torch's sizes,
# a pid, an exit code or a signal's name.
MESSAGE = re.compile(
    r"\b[A-Z]\w*(?:Error|Exception)\b|\b(?:ERROR|[Ee]rror|FATAL|[Ff]atal)\s*[:\]]|['\"`]|\bTried to allocate\b"
    r"|\bpid\b|\bexit ?code\b|\breturn code\b|\bSIG[A-Z]+\b|\d+(?:\.\d+)? ?[GMK]i?B\b"
)


# A title that reports a failure in any common phrasing (issue 35, diagA26): the run or the machine hangs, freezes, crashes,
# fails, errors, is slow, runs out of memory, is killed, or does not work ("# System hangs running nccl-tests, with 2 2080ti
# and NVlink bridge.", NVIDIA/nccl-tests#44; "# Failed to use two gpus.", open-mmlab/mmengine#681; "# 训练报错"). Not a change
# a pull request or a commit names ("# fix: crash when ...", "# feat: ..."): that is the fix, not a report.
FAILURE_SAID = re.compile(
    r"\b(?:fail(?:s|ed|ing|ures?)?|crash(?:es|ed|ing)?|errors?|exceptions?|hang(?:s|ing)?|hung|stuck|freez(?:es|ing|e)|froze|frozen"
    r"|slow(?:er|s|ly|down)?|broken|killed|segfault|segmentation fault|core dumped|OOM|out of memory|time ?outs?|timed out"
    r"|deadlock\w*|NaN|abort(?:s|ed)?|unable to|can't|cannot|could not|couldn't|not found)\b"
    r"|(?:\bnot|n't|\bnever) (?:work|start|run|finish|complete|progress|detect|see|find|use)\w*"
    r"|\b[A-Z]\w*(?:Error|Exception)\b|报错|错误|失败|卡住|卡死",
    re.IGNORECASE,
)
CHANGE_NAMED = re.compile(r"^\W*(?:fix|fixes|fixed|feat|add|adds|support|docs?|refactor|chore|perf|revert|bump)\b", re.IGNORECASE)


def title_reports_failure(text: str) -> bool:
    """The line, a thread's title ("# ..."), reports a failure in any common phrasing (FAILURE_SAID), and names no change."""
    words = text.lstrip("# ").strip()
    return bool(TITLE.match(text)) and FAILURE_SAID.search(words) is not None and not names_change(text)


def names_change(text: str) -> bool:
    """The line, a thread's title ("# ..."), names a change (CHANGE_NAMED: "# feat: add NVIDIA Jetson platform support"): a pull
    request's or a commit's, whose words tell the problem it fixes."""
    return bool(TITLE.match(text)) and CHANGE_NAMED.match(text.lstrip("# ").strip()) is not None


def title_label(line: int, text: str) -> bool:
    """The line is a thread's title that names a crash by its label only (see the module's why)."""
    return line <= TITLE_LINES and bool(TITLE.match(text)) and bool(LABEL.search(text)) and not MESSAGE.search(text)


def title_label_words(text: str) -> str:
    """The label the title names, as a grep pattern for the run's own line ("out of memory", "segmentation fault")."""
    m = LABEL.search(text)
    word = m.group(0).lower() if m else "out of memory"
    return {"oom": "out of memory", "segfault": "segmentation fault"}.get(word.removeprefix("cuda "), word.removeprefix("cuda "))
