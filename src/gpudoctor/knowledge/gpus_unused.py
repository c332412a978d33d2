"""A job's own start-up lines that say GPUs are there and it does not use them, and whether the job meant to.

A framework prints at start-up what devices it found and which it uses: Lightning's `GPU available: True (cuda), used:
False`, Unsloth's banner `Num GPUs = 2.` and then `Num GPUs used = 1`. A run that leaves its GPUs unused fails in no
line: it trains on the CPU (slowly, or until host memory runs out), or a DDP strategy set up for GPUs wraps a CPU
model; the banner is the answer the thread gives (rinongal/textual_inversion#44: "GPU available: True, used: False",
`--gpus 0` read as zero GPUs; ShannonAI/mrc-for-flat-nested-ner#128: the same with `--gpus="0"`; unslothai/unsloth#2425:
two A10s, `Num GPUs used = 1`).

Keyed on the banner and on what the log says the job meant (issue 35, heldout21's no-error-line case 47):
- the banner says GPUs are available and it uses none (`used: False`), or fewer than it found (case `fewer`);
- the log shows the job meant to use them: a GPU option (`--gpus`, `gpus=`, `--devices`, `devices=`,
  `accelerator="gpu"`, `--num_gpus`, `--gpu_ids`), a DDP strategy (`strategy="ddp"`, `distributed_backend=ddp`,
  Lightning's ddp backend in a frame), a launch per GPU (`--nproc_per_node`), or the reporter's sentence that the GPU is
  not used ("GPU usage is 0", "not running on my GPU", "only uses a single GPU"): warn, what the job asked for and what
  it used differ;
- nothing shows what the job meant: info (a run meant for the CPU on a machine with GPUs prints the same banner), and
  the finding says what decides it; info too where the log shows the run ended well (the unused GPUs did not stop it);
- the log shows the CPU chosen (`accelerator="cpu"`, `--accelerator cpu`, `--cpu`, `--device cpu`, `--no_cuda`):
  nothing, the CPU was meant.
It is never an error: the banner shows where the job runs, not that it failed, and it never outranks a failure the log
names (commands/diagnose/analyse.py places it after them).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from gpudoctor.catalog.findings.diagnose import GPUS_LEFT_UNUSED, LOG_SAID_GPU_UNUSED
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge.reruns import HeadLines
from gpudoctor.knowledge.title_said import TITLE, TITLE_LINES

# Lightning's device line (pytorch_lightning and lightning, all versions: "GPU available: True, used: False",
# "GPU available: True (cuda), used: False")
LIGHTNING = re.compile(rb"GPU available: True(?: \(\w+\))?, used: False")
# Unsloth's banner: "NVIDIA A10. Num GPUs = 2. Max memory: 22.184 GB." at load, "Num GPUs used = 1" as training starts
FOUND = re.compile(rb"\bNum GPUs = (\d+)\.")
USED = re.compile(rb"\bNum GPUs used = (\d+)")
# The job meant to use GPUs: a GPU option or a DDP strategy given, a launch of one process per GPU
ASKED = re.compile(
    rb"--gpus?[= ]+(?!flag\b)['\"\[]?[\w-]|\bgpus\s*=\s*['\"\[]?\w|--devices[= ]+['\"\[]?\w|\bdevices\s*=\s*['\"\[]?\w"
    rb"|\baccelerator\s*[=:]\s*['\"]?(?:gpu|cuda|auto)\b|--accelerator[= ]+(?:gpu|cuda)\b|--num[_-]gpus[= ]+\d|--gpu[_-]ids?[= ]+\d"
    rb"|--nproc[_-]per[_-]node[= ]+\d|\bstrategy\s*[=:]\s*['\"]?ddp|\bdistributed_backend\s*[=:]\s*['\"]?ddp|\bddp_backend\b|\bspawn_ddp_children\b"
)
# The reporter's sentence that the job does not use the GPU (a thread's title or a post)
SAID = re.compile(
    rb"(?:\bnot|n't|\bnever)\s+(?:be\s+|being\s+|been\s+|even\s+|actually\s+|really\s+)?(?:use|uses|using|used|utili[sz]\w*|run(?:s|ning)?\s+on|on)\s+"
    rb"(?:the\s+|my\s+|any\s+|a\s+)?(?:[\w-]+\s+)?GPUs?\b"
    rb"|\bGPUs?\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:not|never)\s+(?:being\s+)?(?:used|utili[sz]ed)\b"
    rb"|\bGPU[- ](?:usage|util\w*)\s+(?:is\s+|was\s+|stays\s+|at\s+)?0\b"
    rb"|\bonly\s+(?:uses?|using|used|utili[sz]\w*)\s+(?:a\s+|one\s+|1\s+|the\s+first\s+)?(?:single\s+)?GPU\b"
    rb"|\b(?:unable to|can ?not|can't|cannot) use (?:the |my )?GPU",
    re.IGNORECASE,
)
# The job chose the CPU
CPU = re.compile(
    rb"\baccelerator\s*[=:]\s*['\"]?cpu\b|--accelerator[= ]+['\"]?cpu\b|--cpu(?![\w-])|--device[= ]+['\"]?cpu\b|--no[_-]cuda\b",
    re.IGNORECASE,
)
BANNER_WORDS = (b"used: False", b"Num GPUs")
ASKED_WORDS = (b"gpu", b"devices", b"accelerator", b"nproc", b"ddp")
SAID_WORDS = (b"GPU", b"gpu", b"Gpu")
CPU_WORDS = (b"cpu", b"cuda")


class GpusUnused(HeadLines):
    """What the input's start-up lines say of the GPUs found and used, fed block by block (`feed`, `tee`): a framework
    says what it uses as it starts (HeadLines.HEAD, the first MiB; a thread's paste is shorter)."""

    NEEDLES = BANNER_WORDS + ASKED_WORDS + SAID_WORDS + CPU_WORDS

    def __init__(self) -> None:
        super().__init__()
        self.banner: Optional[tuple[int, str]] = None  # (line, text): the line that says a GPU is available and not used
        self.found: Optional[tuple[int, str, int]] = None  # (line, text, GPUs found): Unsloth's count at load
        self.used: Optional[tuple[int, str, int]] = None  # (line, text, GPUs used)
        self.asked: Optional[tuple[int, str]] = None  # the first line that shows the job meant GPUs
        self.said: Optional[tuple[int, str]] = None  # the reporter's sentence that the GPU is not used
        self.cpu: Optional[tuple[int, str]] = None  # a line that chooses the CPU
        self.title: Optional[tuple[int, str]] = None  # a thread's title that says the GPU is not used (not a question)

    def read(self, block: bytes, begin: int, end: int) -> None:
        if self.lines < TITLE_LINES:
            self.read_title(block, begin, end)
        super().read(block, begin, end)

    def read_title(self, block: bytes, begin: int, end: int) -> None:
        """The input's first lines: a thread's title that says the job does not use the GPU, and asks nothing."""
        at = begin
        for number in range(self.lines + 1, TITLE_LINES + 1):
            nl = block.find(b"\n", at, end)
            text = block[at:end if nl == -1 else nl].decode("utf-8", "replace").strip()
            if self.title is None and TITLE.match(text) and not text.endswith("?") and SAID.search(text.encode("utf-8")):
                self.title = (number, " ".join(text.split())[:200])
            if nl == -1:
                return
            at = nl + 1

    def read_head(self, block: bytes, begin: int, end: int, words: set[bytes]) -> None:
        def first(shape: re.Pattern[bytes]) -> Optional[re.Match[bytes]]:
            return shape.search(block, begin, end)

        def where(m: re.Match[bytes]) -> tuple[int, str]:
            return self.line_at(block, begin, end, m.start())

        if not words.isdisjoint(BANNER_WORDS):
            if self.banner is None and (m := first(LIGHTNING)) is not None:
                self.banner = where(m)
            if self.found is None and (m := first(FOUND)) is not None:
                self.found = (*where(m), int(m.group(1)))
            if self.used is None and (m := first(USED)) is not None:
                self.used = (where(m)[0], m.group(0).decode("ascii"), int(m.group(1)))
        if self.asked is None and not words.isdisjoint(ASKED_WORDS) and (m := first(ASKED)) is not None:
            self.asked = where(m)
        if self.said is None and not words.isdisjoint(SAID_WORDS) and (m := first(SAID)) is not None:
            self.said = where(m)
        if self.cpu is None and not words.isdisjoint(CPU_WORDS) and (m := first(CPU)) is not None:
            self.cpu = where(m)

    def said_line(self) -> str:
        """The reporter's sentence that the job does not use the GPU, with its line ('' when none)."""
        return f"line {self.said[0]}: {self.said[1]}" if self.said is not None else ""

    def findings(self, ended: bool, decided: bool) -> list[Finding]:
        """`ended`: the log shows the run ended well (then the unused GPUs did not stop it: info); `decided`: the log shows
        that, or a failure, or another finding already says the GPU is idle (then a title's words alone add nothing)."""
        if self.cpu is not None:
            return []  # the CPU was chosen
        if self.banner is None and not self.fewer():
            return self.title_said() if not decided else []
        meant = self.asked or self.said
        evidence: dict[str, Any] = {}
        counts: dict[str, Any] = {}  # the title's numbers (case "fewer")
        if self.banner is not None:
            line, banner = self.banner
            case = "none"
            evidence["banner"] = f"line {line}: {banner}"
        elif self.fewer() and self.found is not None and self.used is not None:
            line, banner = self.used[:2]
            case, counts = "fewer", {"available": self.found[2], "used": self.used[2]}
            evidence["banner"] = [f"line {self.found[0]}: {self.found[1]}", f"line {line}: {banner}"]
        else:
            return []
        if self.asked is not None:
            evidence["the job asked for GPUs"] = f"line {self.asked[0]}: {self.asked[1]}"
        if self.said is not None:
            evidence["the reporter says"] = self.said_line()
        if meant is None:
            evidence["what decides it"] = "whether the job was meant to run on the GPUs: its GPU option (gpus, devices, accelerator) or its launch command"
        elif ended:
            evidence["what decides it"] = "the run ended well: the unused GPUs made it slower, not fail"
        return [GPUS_LEFT_UNUSED(
            case=case, severity=Severity.WARN if meant is not None and not ended else Severity.INFO, evidence=evidence,
            line=line, banner=banner, **counts,
            meant=(f", while line {meant[0]} shows it meant to use them" if meant is not None
                   else "; the log does not show whether the job was meant to use them"),
        )]

    def fewer(self) -> bool:
        """The banner says the job uses fewer GPUs than it found."""
        return self.found is not None and self.used is not None and self.used[2] < self.found[2]

    def title_said(self) -> list[Finding]:
        """The thread's title says the job does not use the GPU, and no line of the log says where it runs."""
        if self.title is None:
            return []
        line, said = self.title
        return [LOG_SAID_GPU_UNUSED(evidence={"said": f"line {line}: {said}"}, line=line, said=said.lstrip("# "))]
