"""Pure: where a hung job stopped, read from the last lines its log shows (a paste beside the reporter's words that it
hangs: knowledge/said_hang.py), and what usually hangs there.

The stages are the ones the live hang doctor tells apart (`gpudoctor run --nproc N`: a rank that never joined, a
rendezvous no rank got past, a rank stuck after a step while its peers wait): here read from the log's words instead of
the ranks' traces.

- `rendezvous`: the last lines are the launcher's or the process group's set-up ("initializing ddp: GLOBAL_RANK: 0,
  MEMBER: 1/4", "| distributed init (rank 6): env://", torchrun's OMP_NUM_THREADS banner, "Waiting in store based
  barrier"): the ranks did not all get past `init_process_group`; "MEMBER: k/N" lines say how many joined;
- `setup`: after the rendezvous, before a step is logged (data and model set-up, "Start training", NCCL's communicator
  set-up, the first collective: DDP's broadcast of the parameters);
- `training`: a step, iteration, batch or epoch with its number was logged (knowledge/progress.py `PROGRESS`);
- `evaluation`: the last lines are an evaluation's, a validation's or a checkpoint's: work rank 0 often does alone
  while the other ranks wait in the next collective;
- `unshown`: the log shows none of the program's lines near the sentence.

What usually hangs at each stage, and the commands that decide which, are the finding's words (catalog/findings/diagnose.py
`LOG_SAID_HANG`, built on the live hang doctor's findings for the same stages).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from gpudoctor.knowledge.progress import PROGRESS

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
LOOKED_BACK = 8  # last program lines in which a stage's mark is looked for (the last decides)

# The reporter's words that say where it stops, when the log's lines do not ("it will work fine for 3-5 epochs, then stop
# running", "get stuck after one mini-batch", "stuck at \"initializing ddp: GLOBAL_RANK\"", "stuck on 22,000").
SAID_TRAINING = re.compile(
    r"\b(?:after|at|during|in|for|on)\s+(?:the\s+)?(?:first\s+|\d[\d,]*(?:\s*-\s*\d+)?\s+|one\s+|a few\s+|some\s+|several\s+)?"
    r"(?:epochs?|iter\w*|interation|steps?|batch(?:es)?|mini-?batch(?:es)?)\b|\b(?:stuck|hangs?|hung|freezes) (?:on|at) (?:step |iter\w* |batch )?\d[\d,]*\b",
    re.IGNORECASE,
)

SAID_RENDEZVOUS = re.compile(r"init_process_group|initiali[sz]ing (?:ddp|distributed)|\brendezvous\b|store[ _]based[ _]barrier", re.IGNORECASE)


def stage(lines: Sequence[tuple[int, str]], said: Optional[tuple[int, str]] = None) -> tuple[str, Optional[tuple[int, str]], str, str]:
    """(stage, the line that shows it, a detail: the step, or "k of N ranks logged joining", and whose line it is: "log" or
    "said") of the program's lines `lines` (number, text), the last of them deciding (see the module's why); where they show
    no stage's mark, the reporter's sentence `said` (number, text) names it when it does."""
    for number, text in reversed(lines[-LOOKED_BACK:]):
        if EVALUATION.search(text):
            return "evaluation", (number, text), "", "log"
        if PROGRESS.search(text) and (m := NUMBER.search(text)):
            return "training", (number, text), m.group(0), "log"
        if AFTER_INIT.search(text):
            return "setup", (number, text), "", "log"
        if RENDEZVOUS.search(text):
            return "rendezvous", (number, text), joined(lines), "log"
    if said is not None:
        if m := SAID_TRAINING.search(said[1]):
            return "training", said, re.sub(r"^(?:stuck|hangs?|hung|freezes) (?:on|at) ", "at ", m.group(0)), "said"
        if EVALUATION.search(said[1]):
            return "evaluation", said, "", "said"
        if SAID_RENDEZVOUS.search(said[1]):
            return "rendezvous", said, "", "said"
    if not lines:
        return "unshown", None, "", "log"
    return "setup", lines[-1], "", "log"


def joined(lines: Sequence[tuple[int, str]]) -> str:
    """"k of N ranks joined" from Lightning's "MEMBER: k/N" lines, or ''."""
    members = {(int(m.group(1)), int(m.group(2))) for _, text in lines for m in MEMBER.finditer(text)}
    if not members:
        return ""
    world = max(n for _, n in members)
    return f"{len({k for k, _ in members})} of {world} ranks logged joining"
