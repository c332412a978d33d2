"""Whether the input shows a process that forks: the evidence CUDA's initialization error needs before it is told as a CUDA
re-initialised in a forked child (`cuda-fork-reinit`, knowledge/patterns/cuda.py).

CUDA's error 3 ("CUDA error: initialization error") says only that CUDA could not start in the process: a forked child of a
process that used CUDA is one cause, a driver that is not loaded or does not answer (nvidia_uvm, the device files of a
container) the others (knowledge/cuda_errors.py). A log shows the fork where a child's traceback or its words are there: a
DataLoader worker ("Caught RuntimeError in DataLoader worker process 0", `_worker_loop`), multiprocessing's frames or its
Pool, a start method, the word fork itself ("Cannot re-initialize CUDA in forked subprocess"). Where none is, the error is
told as CUDA's error 3 with what decides between its causes (pywhispercpp, heldout27b: ggml's CUDA set-up in one process,
"CUDA error: initialization error", no fork anywhere). `ForkSeen` reads the whole input as its blocks go by (`feed`, `tee`).
"""

from __future__ import annotations

import re
from typing import Optional, Sequence

from gpudoctor.knowledge.prefilter import may_hold, newlines
from gpudoctor.knowledge.reruns import WholeLines

FORK_SHOWN = re.compile(
    rb"\bfork(?:ed|ing|s)?\b|multiprocessing|DataLoader worker|_worker_loop|\bworker process|\bstart_method\b|\bPool\b|ddp_fork"
    rb"|\bnum_workers\s*[=:]\s*[1-9]",
    re.IGNORECASE,
)
# a literal each FORK_SHOWN match holds (case aside: "ork" is fork's, worker's and num_workers'): a block with none is not searched
NEEDLES = (b"ork", b"ORK", b"ultiprocessing", b"Pool", b"start_method")
# lines holding a needle searched one by one in a block, at most: beyond, the rest of the block is searched whole (a block of
# "network" or "work_dir" lines costs no more than that search of the whole block did)
LINES_SEARCHED = 64


class ForkSeen(WholeLines):
    """The first line of the input that shows a fork (FORK_SHOWN): `line` (0 when none), `text`."""

    def __init__(self) -> None:
        super().__init__()
        self.line = 0
        self.text = ""

    def read(self, block: bytes, begin: int, end: int) -> None:
        if not self.line:
            m = first_shown(block, begin, end, may_hold(block, NEEDLES))
            if m is not None:
                self.line, self.text = self.line_at(block, begin, end, m.start())
        self.lines += newlines(block, begin, end)


def first_shown(block: bytes, begin: int, end: int, needles: Sequence[bytes]) -> Optional[re.Match[bytes]]:
    """The first FORK_SHOWN match in block[begin:end] (whole lines), searched only on the lines that hold one of the needles
    (a search of the whole block with a pattern of many alternatives costs more than all the other readers of the block)."""
    at = {needle: block.find(needle, begin, end) for needle in needles}
    at = {needle: pos for needle, pos in at.items() if pos != -1}
    for _ in range(LINES_SEARCHED):
        if not at:
            return None
        first = min(at.values())
        start = max(block.rfind(b"\n", begin, first) + 1, begin)
        stop = block.find(b"\n", first, end)
        stop = end if stop == -1 else stop
        m = FORK_SHOWN.search(block, start, stop)
        if m is not None:
            return m
        for needle, pos in list(at.items()):
            if pos < stop:
                nxt = block.find(needle, stop, end)
                if nxt == -1:
                    del at[needle]
                else:
                    at[needle] = nxt
    return FORK_SHOWN.search(block, stop, end) if at else None
