"""Pure: the program's own statement that it runs without the GPU, as the answer where the thread's failure is that.

A program that leaves its GPU unused fails in no line: it says so as it starts, and goes on on the CPU. Its statement is
read by the rules of its family: onnxruntime's providers, sherpa-onnx's and Ollama's backends (`gpu-backend-not-built`),
onnxruntime's CUDA provider that did not load (`onnxruntime-cuda-provider-failed`), TensorFlow's GPU libraries
(`tensorflow-gpu-libraries-not-loaded`), a program's probe that found no GPU (`program-found-no-gpu`), and the run's own
device, banner, layer and process-count lines (`gpus-left-unused`, knowledge/gpus_unused.py). Each is a warning: a run
meant for the CPU prints the same line.

Where the log shows no failure and no end, that warning beside the undecided answer left the headline undecided while
the cause was in the answer (issue 35, heldout29b's ollama-8532 `runners=[cpu]`, roop-128's CPU-only providers,
sherpa-onnx-1534 and -440's "Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON ... Fallback to cpu!", privategpt-colab-3's
`offloaded 0/35 layers to GPU`). One class rule decides it (`program-runs-on-cpu`, commands/diagnose/analyse.py):

- the program's own line says the work runs on the CPU, or on fewer GPUs (layers, processes) than asked: a warning of the
  families above, whose evidence is the program's line (not the reporter's sentence that it uses the CPU);
- the thread's failure is that the GPU is not used: the reporter's words say so (the title or a post: "ollama only using
  cpu even with gpu found", "Llamacpp not offloading on GPU", "roop use CPU, not GPU"), or the job asked for the GPU (a
  GPU option, `device="cuda"`, `-ngl 35`), or the statement itself says the GPU was asked for and refused (sherpa-onnx's
  "Please compile with -DSHERPA_ONNX_ENABLE_GPU=ON", onnxruntime's "Specified provider 'CUDAExecutionProvider' is not in
  available provider names", llama.cpp's "--n-gpu-layers option will be ignored", onnxruntime's CUDA provider that it
  tried to create, TensorFlow's GPU it skipped, autocast's "device_type of 'cuda', but CUDA is not available");
  (the job's ask and the statement's own words count in a thread alone, an input with a thread's frame and title: in a log
  of the user's own a library's default asks for the GPU too, and a config's `device: cpu` reads as a device line);
- the log shows no failure (no error finding) and no end, and nothing else the undecided answer would lead with than
  lines that only mention an error (its cases `log` and `mentions`; those lines are kept in the evidence).

Then the answer is a warning that names the program's line and the fix of the finding that read it, and the run counts
as failed (exit 1: core/findings.py SAID_FAILED), as a hang or an out of memory the reporter states does. Never an error:
the line shows where the work runs, not that a line failed. Not where the job chose the CPU (`--cpu`, `--device cpu`:
knowledge/gpus_unused.py), not where the log ends (the run finished: the warning stays beside the end), not beside a
failure the log names or a reporter's hang or out of memory, which stay the answer.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from gpudoctor.catalog.findings.diagnose import PROGRAM_RUNS_ON_CPU
from gpudoctor.core.findings import Finding, Severity
from gpudoctor.knowledge.gpus_unused import GpusUnused

# The findings whose line is a program's statement that it runs without the GPU (knowledge/patterns/: classes28b.py,
# classes10a.py, classes17b.py; knowledge/gpus_unused.py)
STATEMENTS = ("gpu-backend-not-built", "onnxruntime-cuda-provider-failed", "tensorflow-gpu-libraries-not-loaded", "program-found-no-gpu",
              "gpus-left-unused")
# The findings whose statement itself says the GPU was asked for and refused: onnxruntime tried to create its CUDA
# provider; TensorFlow found the GPU and skipped it
ASKED_ALWAYS = ("onnxruntime-cuda-provider-failed", "tensorflow-gpu-libraries-not-loaded")
# A statement whose words say the GPU was asked for: sherpa-onnx's provider=cuda refused, onnxruntime's providers asked
# for, llama.cpp's -ngl ignored, torch's autocast asked for cuda, a program's cuda=True, a fallback that says it looked
# for the GPU ("GPU not detected, reverting to CPU")
ASKED_IN_LINE = re.compile(
    r"ENABLE_GPU=ON|Specified provider '\w+ExecutionProvider'|--n-gpu-layers option will be ignored|device_type of '?cuda"
    r"|\bcuda\s*=\s*True\b|\buse gpu\s*=\s*1\b|\b(?:reverting|falling back|fall back|fell back|switching|defaulting) to (?:the )?CPU\b|\bFallback to cpu\b",
    re.IGNORECASE,
)
# gpus-left-unused's cases that say fewer GPUs (processes) than asked, not the CPU
FEWER = ("fewer", "one-process", "one-process-launched")
# The undecided answer's cases the statement decides: no line at all, or only lines that mention an error (never lines the
# log wrote at error level, an earlier attempt, a reporter's quoted message: those lead as they do)
DECIDES = ("log", "mentions")
SAID_KEPT = 200  # characters of the program's line quoted


def statement(f: Finding, unused: Optional[GpusUnused]) -> Optional[tuple[int, str]]:
    """The program's line that `f` read, when it is the program's own statement that it runs without the GPU: (line, text)."""
    if f.id not in STATEMENTS or f.severity is not Severity.WARN:
        return None
    if f.id == "gpus-left-unused":
        if unused is None or not unused.program_said():
            return None  # the CPU stands only on the reporter's sentence: no program's statement
        shown = f.evidence.get("on the CPU") or f.evidence.get("one process") or f.evidence.get("banner")
    else:
        shown = f.evidence.get("log")
    first = shown[0] if isinstance(shown, list) and shown else shown
    if not isinstance(first, str):
        return None
    m = re.match(r"line (\d+): (.*)", first.strip(), re.DOTALL)
    if m is None:
        return None
    return int(m.group(1)), " ".join(m.group(2).split("\n", 1)[0].split())[:SAID_KEPT]


def wanted(f: Finding, said: tuple[int, str], unused: Optional[GpusUnused], thread: bool) -> Optional[dict[str, Any]]:
    """What shows the GPU was meant: the reporter's words that it is not used; in a thread (`thread`: the input has a
    thread's frame and title), also the job's ask or the statement's own words; None when nothing. Outside a thread an
    ask is not a thread's failure: a library asks for the GPU by default (torch's autocast, onnxruntime's provider list,
    TensorFlow's devices) and a job run on a CPU node on purpose prints the same refusal (heldout18w's ColBERT search on a
    four-CPU Slurm node), and a config's `device: cpu` above a GPU run reads as the device line."""
    if unused is not None and unused.cpu is not None:
        return None  # the job chose the CPU
    meant = unused.wanted() if unused is not None else None
    if meant is not None and (meant[0] == "said" or thread):
        how, line, text = meant
        key = "the reporter says" if how == "said" else "the job asked for the GPU"
        words = "the reporter says the GPU is not used" if how == "said" else "the job asked for the GPU"
        return {"key": key, "shown": f"line {line}: {text}", "meant": f"{words} (line {line})"}
    if thread and (f.id in ASKED_ALWAYS or ASKED_IN_LINE.search(said[1]) or (f.id == "gpus-left-unused" and "the job asked for GPUs" in f.evidence)):
        return {"key": "", "shown": "", "meant": "its own line says the GPU was asked for"}
    return None


def runs_on_cpu(findings: list[Finding], unused: Optional[GpusUnused], case: str, mentions: list[str], thread: bool) -> Optional[Finding]:
    """`program-runs-on-cpu`: the answer for a log whose undecided answer (its `case`) leaves a program's statement that it
    runs without the GPU a warning beside it, where the thread's failure is that; None otherwise. `mentions`: the lines that
    speak of an error the answer would have listed, kept in the evidence."""
    if case not in DECIDES or any(f.severity is Severity.ERROR for f in findings):
        return None
    for f in findings:
        said = statement(f, unused)
        if said is None:
            continue
        meant = wanted(f, said, unused, thread)
        if meant is None:
            continue
        evidence: dict[str, Any] = {"the program says": f"line {said[0]}: {said[1]}", "finding": f.id}
        if meant["key"]:
            evidence[meant["key"]] = meant["shown"]
        if mentions:
            evidence["lines that speak of an error"] = mentions
        # what the finding's words name: the detail its rule read, or the first part of its title (gpus-left-unused's
        # title repeats the lines quoted here)
        detail = f.evidence.get("detail") or (f.title.split(":", 1)[0] if f.id != "gpus-left-unused" else "")
        return PROGRAM_RUNS_ON_CPU(
            case="fewer" if f.id == "gpus-left-unused" and case_of(f) in FEWER else "cpu", evidence=evidence,
            line=said[0], said=said[1], meant=meant["meant"], detail=f": {detail}" if isinstance(detail, str) and detail else "",
            fix=f.fix, finding=f.id,
        )
    return None


def case_of(f: Finding) -> str:
    """gpus-left-unused's case, told by its evidence (one process; a banner of two lines: found, then used)."""
    if "one process" in f.evidence:
        return "one-process"
    banner = f.evidence.get("banner")
    return "fewer" if isinstance(banner, list) else "cpu"
