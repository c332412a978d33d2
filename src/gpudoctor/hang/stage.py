"""Pure: where a hung job stopped, read from the last lines its log shows (a paste beside the reporter's words that it
hangs: knowledge/said_hang.py), and what usually hangs there.

The stages are the ones the live hang doctor tells apart (`gpudoctor run --nproc N`: a rank that never joined, a
rendezvous no rank got past, a rank stuck after a step while its peers wait): here read from the log's words instead of
the ranks' traces.

- `rendezvous`: the last lines are the launcher's or the process group's set-up ("initializing ddp: GLOBAL_RANK: 0,
  MEMBER: 1/4", "| distributed init (rank 6): env://", torchrun's OMP_NUM_THREADS banner, "Waiting in store based
  barrier"): the ranks did not all get past `init_process_group`. Lightning's "MEMBER: k/N" lines say how many joined,
  and the count picks the stage's words: fewer than N (`rendezvous-partial`: the others never got there), all N
  (`rendezvous-all`: every rank got there and none past it), or no count (`rendezvous`);
- `setup`: after the rendezvous, before a step is logged (data and model set-up, "Start training", NCCL's communicator
  set-up, the first collective: DDP's broadcast of the parameters); `setup-at` where the last lines say what set-up
  printed last (`SETUP_AT`: its arguments or configuration, the model's summary, its weights loading); `setup-said`
  where the log shows none of the program's lines and the reporter's words name a set-up step ("stuck at dataset
  creation step");
- `training`: a step, iteration, batch or epoch with its number was logged (knowledge/progress.py `PROGRESS`), or a
  progress bar's counter ("Train GPT-2 model:   0%|     | 0/3000 [00:00<?, ?it/s]": the first step never ended);
- `evaluation`: the last lines are an evaluation's, a validation's or a checkpoint's: work rank 0 often does alone
  while the other ranks wait in the next collective;
- `cut`: the paste, not the job, ends there: its last line stops inside a block the program prints whole (an argument
  dump whose brace is never closed, `Args {` with no `}`; a dict cut after a key) or inside a line (a logger's stamp
  with no message after it): the job got further than the paste shows, so it is no place the job stopped;
- `extension-build`: the last line the log shows, or the line the reporter's words quote as where it stops, is torch's
  "Using <dir> as PyTorch extensions root..." (torch.utils.cpp_extension's JIT build of an op: DeepSpeed's, ColossalAI's, a
  project's CUDA kernels), with no step after it: the build runs, or waits on the lock a killed build left in that folder
  (lucidrains/DALLE-pytorch#172's title: "it will not continue<Using /home/zz/.cache/torch_extensions as PyTorch extensions
  root... >");
- `unshown`: the log shows none of the program's lines near the sentence.

An inference server's log (knowledge/serving.py: TGI's launcher, vLLM, SGLang, ollama, Triton, llama.cpp's server) gets
the same reading with the server's words (`serving-*`: its start-up; requests being served, or the server up and waiting
for them; a cut paste; nothing shown): a server hangs on its shards, its requests and the KV cache they fill, not on a
data loader or DDP. One whose own last lines show training steps or an evaluation is a training job with a server beside
it (an RL job's rollout server): the training words stay.

What usually hangs at each stage, and the commands that decide which, are the finding's words (catalog/findings/diagnose.py
`LOG_SAID_HANG`, built on the live hang doctor's findings for the same stages).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional, Sequence

from gpudoctor.knowledge.progress import PROGRESS
from gpudoctor.knowledge.serving import READY, REQUEST

RENDEZVOUS = re.compile(
    r"initiali[sz]ing (?:ddp|distributed)\b|\bdistributed init\b|init_process_group|store[ _]based[ _]barrier|\brendezvous\b"
    # the launcher's own lines as it starts the ranks (torchrun's OMP_NUM_THREADS banner, torch.distributed.launch's
    # deprecation): the ranks printed nothing after them; a setting's name in an argument dump (world_size=2) is no mark
    r"|Setting OMP_NUM_THREADS environment variable|\bGLOBAL_RANK\b|torch\.distributed\.(?:run|launch)\b",
    re.IGNORECASE,
)
MEMBER = re.compile(r"\bMEMBER:\s*(\d+)\s*/\s*(\d+)")
# After the rendezvous: the process group is up (the launcher or the store says all ranks met), or NCCL sets up its
# communicator (the first collective), or DDP has built its buckets.
AFTER_INIT = re.compile(
    r"All distributed processes registered|Completed store-based barrier|NCCL INFO|Reducer buckets|\bnccl\b.*\bversion\b",
    re.IGNORECASE,
)
EVALUATION = re.compile(
    r"\b(?:evaluat\w*|validat\w*|inference on|testing|test set|val(?:idation)? set|sav(?:e|ing) (?:the )?(?:checkpoint|model)|checkpoint (?:saved|to))\b",
    re.IGNORECASE,
)
NUMBER = re.compile(r"(?<![\"'])\b(?:epoch|iter(?:ation)?|step|batch)s?\b(?![\"'])\s*[:=#\[]?\s*(\d+(?:\s*/\s*\d+)?)", re.IGNORECASE)
BAR = re.compile(r"\b\d+/\d+(?= \[)")  # a progress bar's counter (tqdm's "| 0/3000 [00:00<?, ?it/s]"): the step it is at
# A bar of set-up's, not of steps: weights or files loading, a dataset mapped, tokenised or cached, a build.
SET_UP_BAR = re.compile(
    r"\b(?:load|download|fetch|extract|unpack|build|compil|cach|prepar|preprocess|tokeni[sz]|map|filter|convert|sanity)\w*", re.IGNORECASE
)
LOOKED_BACK = 8  # last program lines in which a stage's mark is looked for (the last decides)

# What set-up printed last, in the last lines (the first kind that matches names it):
# - weights loading: "Loading checkpoint shards:  50%", "=> loading checkpoint 'x.pth'", "load checkpoint from ...",
#   "Loading model weights took 14.99 GB" (vLLM), "Restoring states from the checkpoint";
# - a model's summary: Lightning's table ("| Name | Type | Params", "Total params"), "Total size of trainable weights: 0G 10M"
#   (tensorpack, jiahuiyu/generative_inpainting#52), "Number of parameters: 93.2 M";
# - its arguments or configuration: a Namespace(...) or a dict printed, TGI's `Args {`, detectron2's "Command Line Args:",
#   a "Config:" or "CONFIGURATION" header, or lines that are a key and its value ("FP16 Run: True", "- device : cuda",
#   "allennlp.common.params - dataset_reader.lazy = False"), at least two of the last three.
WEIGHTS = re.compile(
    r"\bload(?:ing|ed)? (?:the )?(?:pretrained |pre-trained |model )?(?:checkpoint|weights?|state[ _]dict|model|shards?)\b"
    r"|\bcheckpoint shards\b|=> loading\b|\bRestor(?:e|ing) (?:states|checkpoint|model|parameters)\b|\bDownloading (?:shards|model|weights)\b",
    re.IGNORECASE,
)
SUMMARY = re.compile(
    r"\|\s*Name\s*\|\s*Type\s*\|\s*Params|\b(?:Total|Trainable|Non-trainable) params\b|\btotal size of trainable weights\b"
    r"|\b(?:number of|num(?:ber)?\.?) (?:trainable )?param(?:eter)?s\b|\bmodel summary\b",
    re.IGNORECASE,
)
DUMP_HEAD = re.compile(r"\bNamespace\(|\bArgs \{|\bCommand Line Args\b|^\s*(?:Config(?:uration)?|CONFIGURATION|Arguments|Hyper-?parameters)\b\s*:?|[{(]'\w+':")
KEY_VALUE = re.compile(
    r"(?:^|\s-\s|\|\s)\s*[-*]?\s*(?!(?:INFO|DEBUG|WARN(?:ING)?|ERROR|CRITICAL|NOTE|Note|Warning|Error)\b)"  # (a logger's level: no key)
    r"[A-Za-z_][\w.\-]*(?: [A-Za-z_][\w.\-]*){0,2}\s*(?::|=)(?:\s+\S.*)?,?\s*$"
)
SET_UP_AT = (("weights", WEIGHTS), ("summary", SUMMARY))
AT_WORDS = {"weights": "its weights loading", "summary": "the model's summary", "arguments": "its arguments printed"}

# A paste cut inside a line: a logger's stamp with no message after it ("2020-12-25 14:54:22,559 -"), a line that ends on
# a separator a message never ends on (a value's '=' or ',' inside a dump, a ' -' or ' |' before a message), more brackets
# opened than closed on it ("INFO:ash:{'train': {'log_interval': 200, 'seed':"), or the paster's own mark that lines were
# left out ("...", "[truncated]").
CUT_LINE = re.compile(
    r"^\W*(?:\d{2,4}[-/]\d{1,2}[-/]\d{1,4}[T ]?)?\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d+)?Z?\s*[-|:]?\s*$|(?:,|=|\s[-|])\s*$"
    r"|^\s*(?:\.{3,}|\u2026|\[\.\.\.\]|\(\.\.\.\)|\[?(?:truncated|snip(?:ped)?)\]?)\s*$",
    re.IGNORECASE,
)
OPENS, CLOSES = "{([", "})]"


@dataclass(frozen=True)
class Stopped:
    """Where a hung job's log stops: `stage` (the cases above, `serving-` before them for a server), the line that shows it
    (number, text) and whose it is ("log", or "said": the reporter's sentence named the stage), and `detail`: the step
    (training), how many ranks logged joining (rendezvous), what set-up printed last (setup-at), what cut the paste (cut)."""

    stage: str
    line: Optional[tuple[int, str]] = None
    detail: str = ""
    whose: str = "log"


def stage(lines: Sequence[tuple[int, str]], said: Optional[tuple[int, str]] = None, server: bool = False) -> Stopped:
    """Where the run stopped, read from the program's lines `lines` (number, text), the last of them deciding (see the
    module's why); where they show no stage's mark, the reporter's sentence `said` (number, text) names it when it does.
    `server`: the log is an inference server's (knowledge/serving.py): the `serving-*` stages."""
    found = job_stage(lines, said)
    if not server or found.whose == "log" and found.stage in ("training", "evaluation"):
        return found  # (a log whose own lines show steps or an evaluation is a training job's, a server beside it or not)
    if any(REQUEST.search(text) or READY.search(text) for _, text in lines[-LOOKED_BACK:]) and found.stage not in ("cut", "unshown"):
        # requests taken, or the server up and waiting for them: it hangs serving them
        found = Stopped("requests", next((n, t) for n, t in reversed(lines) if REQUEST.search(t) or READY.search(t)))
    kind = {"rendezvous": "setup", "rendezvous-partial": "setup", "rendezvous-all": "setup", "setup-said": "setup", "extension-build": "setup", "training": "unshown",
            "evaluation": "unshown"}.get(found.stage, found.stage)  # (the reporter's words of a step: no server's)
    return Stopped(f"serving-{kind}", found.line if kind != "unshown" else None, found.detail if kind in ("setup-at", "cut") else "", found.whose)


# torch.utils.cpp_extension's line as it starts a JIT build or load, with the folder it builds in (and takes its lock in):
# a path of plain characters only, since the fix names it in a command (no quote, `$`, `;` or backquote from a log)
EXTENSION_ROOT = re.compile(r"\bUsing (?P<root>[\w./~+-]+) as PyTorch extensions root")


def job_stage(lines: Sequence[tuple[int, str]], said: Optional[tuple[int, str]]) -> Stopped:
    """The stage a training job's log stops at (see `stage`)."""
    if lines and (m := EXTENSION_ROOT.search(lines[-1][1])):
        return Stopped("extension-build", lines[-1], m["root"])
    if said is not None and (m := EXTENSION_ROOT.search(said[1])) and not any(PROGRESS.search(t) for _, t in lines[-LOOKED_BACK:]):
        return Stopped("extension-build", said, m["root"], "said")  # (the reporter quotes the line it stops at)
    cut = cut_by_paste(lines)
    if cut is not None:
        return cut
    for number, text in reversed(lines[-LOOKED_BACK:]):
        if EVALUATION.search(text):
            return Stopped("evaluation", (number, text))
        if PROGRESS.search(text) and (m := NUMBER.search(text) or (None if SET_UP_BAR.search(text) else BAR.search(text))):
            return Stopped("training", (number, text), m.group(0))
        if AFTER_INIT.search(text):
            return Stopped("setup", (number, text))
        if RENDEZVOUS.search(text):
            k, world = joined(lines)
            if not world:
                return Stopped("rendezvous", (number, text))
            told = f"{k} of {world} ranks logged joining"
            return Stopped("rendezvous-all" if k >= world else "rendezvous-partial", (number, text), told)
    if said is not None:
        if m := SAID_TRAINING.search(said[1]):
            return Stopped("training", said, re.sub(r"^(?:stuck|hangs?|hung|freezes) (?:on|at) ", "at ", m.group(0)), "said")
        if EVALUATION.search(said[1]):
            return Stopped("evaluation", said, whose="said")
        if SAID_RENDEZVOUS.search(said[1]):
            return Stopped("rendezvous", said, whose="said")
    if not lines:
        m = SAID_SETUP.search(said[1]) if said is not None else None
        return Stopped("setup-said", said, m.group(0), "said") if m and said is not None else Stopped("unshown")
    at = set_up_at(lines)
    return Stopped("setup-at", lines[-1], AT_WORDS[at]) if at else Stopped("setup", lines[-1])


def set_up_at(lines: Sequence[tuple[int, str]]) -> str:
    """What set-up printed last ("weights", "summary", "arguments"), read from the last three lines, or ''."""
    last = [text for _, text in lines[-3:]]
    for kind, words in SET_UP_AT:
        if words.search(last[-1]):
            return kind
    if DUMP_HEAD.search(last[-1]) or sum(bool(KEY_VALUE.search(t) or DUMP_HEAD.search(t)) for t in last) >= 2:
        return "arguments"
    return ""


def cut_by_paste(lines: Sequence[tuple[int, str]]) -> Optional[Stopped]:
    """The `cut` stage, when the last line stops inside a block the program prints whole (a line that ends on an opening
    bracket, "Args {", whose closing line never comes) or inside a line, else None."""
    if not lines:
        return None
    blocks: list[int] = []  # the lines that opened the blocks still open
    for n, t in lines:
        t = t.rstrip()
        net = sum(t.count(c) for c in OPENS) - sum(t.count(c) for c in CLOSES)
        if net > 0 and t[-1:] in OPENS:
            blocks.append(n)
        elif net < 0:
            del blocks[max(len(blocks) + net, 0):]  # (its closing brackets close the innermost blocks: "[0] }")
    number, text = lines[-1]
    if blocks:
        return Stopped("cut", (number, text), f"inside the block opened at line {blocks[0]}")
    if CUT_LINE.search(text) or sum(text.count(c) for c in OPENS) > sum(text.count(c) for c in CLOSES):
        return Stopped("cut", (number, text), "inside a line")
    return None


# The reporter's words that say where it stops, when the log's lines do not ("it will work fine for 3-5 epochs, then stop
# running", "get stuck after one mini-batch", "stuck at \"initializing ddp: GLOBAL_RANK\"", "stuck on 22,000").
SAID_TRAINING = re.compile(
    r"\b(?:after|at|during|in|for|on)\s+(?:the\s+)?(?:first\s+|\d[\d,]*(?:\s*-\s*\d+)?\s+|one\s+|a few\s+|some\s+|several\s+)?"
    r"(?:epochs?|iter\w*|interation|steps?|batch(?:es)?|mini-?batch(?:es)?)\b|\b(?:stuck|hangs?|hung|freezes) (?:on|at) (?:step |iter\w* |batch )?\d[\d,]*\b",
    re.IGNORECASE,
)

# A set-up step the reporter names, where the log shows none of the program's lines ("Running on SLURM cluster with multiple
# GPUs gets stuck at dataset creation step", mlcommons/algorithmic-efficiency#572: the paste is nvidia-smi's).
SAID_SETUP = re.compile(
    r"\b(?:at|during|in|on|while|after)\s+(?:the\s+)?(?:dataset\s+(?:creation|loading|preparation|building)|data\s*(?:loading|loader|preparation)"
    r"|(?:model|weights?|checkpoint)\s+loading|loading\s+(?:the\s+)?(?:dataset|data|model|weights?|checkpoint)|initiali[sz]ation)(?:\s+step)?\b",
    re.IGNORECASE,
)

SAID_RENDEZVOUS = re.compile(r"init_process_group|initiali[sz]ing (?:ddp|distributed)|\brendezvous\b|store[ _]based[ _]barrier", re.IGNORECASE)


def joined(lines: Sequence[tuple[int, str]]) -> tuple[int, int]:
    """(k, N): k of N ranks logged joining, from Lightning's "MEMBER: k/N" lines, or (0, 0)."""
    members = {(int(m.group(1)), int(m.group(2))) for _, text in lines for m in MEMBER.finditer(text)}
    if not members:
        return 0, 0
    return len({k for k, _ in members}), max(n for _, n in members)
